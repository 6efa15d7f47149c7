// swift-tools-version:5.9
// TaskKey: the key-management and crypto toolkit of the Tasker task app.
// Only the toolchain and Debian's system C libraries are used; nothing is fetched.
import PackageDescription

let package = Package(
  name: "TaskKey",
  products: [
    .library(name: "TaskCrypto", targets: ["TaskCrypto"]),
    .library(name: "TaskVault", targets: ["TaskVault"]),
    .library(name: "AssistantKeys", targets: ["AssistantKeys"]),
    .library(name: "BackupRules", targets: ["BackupRules"]),
    .executable(name: "taskkey", targets: ["taskkey"]),
  ],
  targets: [
    // System C libraries, found through pkg-config; only TaskCrypto imports them.
    .systemLibrary(
      name: "COpenSSL",
      pkgConfig: "libcrypto",
      providers: [.apt(["libssl-dev"])]
    ),
    .systemLibrary(
      name: "CSodium",
      pkgConfig: "libsodium",
      providers: [.apt(["libsodium-dev"])]
    ),
    // Non-variadic wrappers for variadic syscalls (prctl) that Swift cannot import.
    .target(name: "CTaskKeySupport"),
    // Per-thread nonce randomness from getrandom(2), fork-safe; TaskCrypto only.
    .target(name: "CTaskCryptoRandom"),

    .target(
      name: "TaskCrypto",
      dependencies: ["COpenSSL", "CSodium", "CTaskKeySupport", "CTaskCryptoRandom"]
    ),
    .target(
      name: "TaskVault",
      dependencies: ["TaskCrypto"]
    ),
    .target(
      name: "AssistantKeys",
      dependencies: ["TaskCrypto", "TaskVault"]
    ),
    .target(
      name: "BackupRules",
      dependencies: ["TaskCrypto", "TaskVault", "AssistantKeys"]
    ),
    .target(
      name: "TaskKeyCLI",
      dependencies: ["TaskCrypto", "TaskVault", "AssistantKeys", "BackupRules"]
    ),
    .executableTarget(
      name: "taskkey",
      dependencies: ["TaskKeyCLI"]
    ),

    // The benchmark: TaskKey against raw OpenSSL (in C) in the same run.
    .target(
      name: "CBenchBaseline",
      linkerSettings: [.linkedLibrary("crypto")]
    ),
    .executableTarget(
      name: "taskkey-bench",
      dependencies: ["TaskCrypto", "CBenchBaseline"]
    ),

    // Helpers shared by the test targets: running the real binary, temp dirs.
    .target(
      name: "TaskKeyTestSupport",
      path: "Tests/TaskKeyTestSupport"
    ),
    .testTarget(
      name: "TaskCryptoTests",
      dependencies: ["TaskCrypto", "TaskKeyTestSupport"]
    ),
    .testTarget(
      name: "AssistantKeysTests",
      dependencies: ["AssistantKeys", "TaskVault", "TaskCrypto", "TaskKeyTestSupport"]
    ),
    .testTarget(
      name: "TaskKeyCLITests",
      dependencies: ["TaskKeyCLI", "TaskCrypto", "TaskVault", "TaskKeyTestSupport", "taskkey"]
    ),
    .testTarget(
      name: "BackupRulesTests",
      dependencies: [
        "BackupRules", "AssistantKeys", "TaskVault", "TaskCrypto", "TaskKeyCLI", "TaskKeyTestSupport", "taskkey",
      ]
    ),
    .testTarget(
      name: "TaskVaultTests",
      dependencies: ["TaskVault", "TaskCrypto", "TaskKeyCLI", "TaskKeyTestSupport", "taskkey"]
    ),
  ]
)
