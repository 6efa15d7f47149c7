// swift-tools-version:5.9
// Tasker: the Linux task app that links TaskKey by path, as any app would.
import PackageDescription

let package = Package(
  name: "Tasker",
  dependencies: [.package(name: "TaskKey", path: "../..")],
  targets: [
    // libmicrohttpd from Debian; only the gate's HTTP binding file imports it.
    .systemLibrary(
      name: "CMicroHTTPD",
      pkgConfig: "libmicrohttpd",
      providers: [.apt(["libmicrohttpd-dev"])]
    ),
    .target(
      name: "TaskerGate",
      dependencies: [
        "CMicroHTTPD",
        .product(name: "AssistantKeys", package: "TaskKey"),
      ]
    ),
    .testTarget(name: "TaskerGateTests", dependencies: ["TaskerGate"]),
  ]
)
