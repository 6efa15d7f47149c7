// swift-tools-version:5.9
// The start-up floor taskkey-bench compares `taskkey` processes against: a
// Swift main that does nothing, built the default way (dynamic runtime) and
// with the static runtime.
import PackageDescription

let package = Package(
  name: "EmptyMain",
  targets: [.executableTarget(name: "empty-main")]
)
