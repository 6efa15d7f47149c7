// swift-tools-version:5.9
// A minimal app that uses TaskKey the way Tasker does: it opens the unlocked
// vault's note keyring to seal and open a note, and checks an assistant key.
import PackageDescription

let package = Package(
  name: "NoteApp",
  dependencies: [
    // In your app: .package(url: "<your TaskKey git URL>", from: "0.2.0"), or a local path:
    .package(name: "TaskKey", path: "../..")
  ],
  targets: [
    .executableTarget(
      name: "NoteApp",
      dependencies: [
        .product(name: "TaskCrypto", package: "TaskKey"),
        .product(name: "TaskVault", package: "TaskKey"),
        .product(name: "AssistantKeys", package: "TaskKey"),
      ]
    )
  ]
)
