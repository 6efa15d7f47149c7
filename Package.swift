// swift-tools-version:5.9
// TaskKey: the key-management and crypto toolkit of the Tasker task app.
// Only the toolchain and Debian's system C libraries are used; nothing is fetched.
import PackageDescription

let package = Package(
  name: "TaskKey",
  products: [
    .library(name: "TaskSystem", targets: ["TaskSystem"]),
    .library(name: "TaskCrypto", targets: ["TaskCrypto"]),
    .library(name: "TaskVault", targets: ["TaskVault"]),
    .library(name: "AssistantKeys", targets: ["AssistantKeys"]),
    .library(name: "BackupRules", targets: ["BackupRules"]),
    .library(name: "TaskAttachments", targets: ["TaskAttachments"]),
    .library(name: "CommandKit", targets: ["CommandKit"]),
    .library(name: "ExitCodeMap", targets: ["ExitCodeMap"]),
    // For tests only (this package's and an app's): the fault-injecting file
    // system. No shipped library or binary links it.
    .library(name: "TaskSystemTesting", targets: ["TaskSystemTesting"]),
    // For tests only: helpers both packages' end-to-end tests share (the JSON
    // convention's checker).
    .library(name: "TaskKeyTestSupport", targets: ["TaskKeyTestSupport"]),
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
    // Debian's zlib, to read the published vectors whose fields are zlib-compressed; only TaskKeyVectors
    // imports it, and no library product links it.
    .systemLibrary(
      name: "CZlib",
      pkgConfig: "zlib",
      providers: [.apt(["zlib1g-dev"])]
    ),
    // Non-variadic wrappers for syscalls Swift cannot import (prctl, xattrs); only TaskSystem uses it.
    .target(name: "CTaskSystem"),

    // The one edge to the operating system: the only module that imports Glibc.
    .target(
      name: "TaskSystem",
      dependencies: ["CTaskSystem"]
    ),
    // The test seam of TaskSystem's file-system protocol: every step can be
    // made to fail. Tests only.
    .target(
      name: "TaskSystemTesting",
      dependencies: ["TaskSystem"]
    ),
    // TaskCrypto's own C: the SSSE3 loops of the base64 codec (pure computation, no libc); only TaskCrypto uses it.
    .target(name: "CTaskCrypto"),
    .target(
      name: "TaskCrypto",
      dependencies: ["COpenSSL", "CSodium", "CTaskCrypto", "TaskSystem"]
    ),
    .target(
      name: "TaskVault",
      dependencies: ["TaskCrypto", "TaskSystem"]
    ),
    .target(
      name: "AssistantKeys",
      dependencies: ["TaskCrypto", "TaskVault", "TaskSystem"]
    ),
    .target(
      name: "BackupRules",
      dependencies: ["TaskCrypto", "TaskVault", "AssistantKeys", "TaskSystem"]
    ),
    .target(
      name: "TaskAttachments",
      dependencies: ["TaskCrypto", "TaskSystem"]
    ),
    // Pairing a second device (docs/formats/pairing.md): the code, the
    // messages, the CPace exchange and the channel over TaskSystem's TCP.
    .target(
      name: "TaskPairing",
      dependencies: ["TaskCrypto", "TaskSystem"]
    ),
    // The command kit every command of the project is built on: declarations,
    // parser, help, man page, completions, streams, bounded input, the one
    // strict JSON codec and the one exit-code table. Only TaskSystem below it.
    .target(
      name: "CommandKit",
      dependencies: ["TaskSystem"]
    ),
    // The one map from the libraries' errors to the exit-code table, for any
    // command that calls them (taskkey and tasker alike).
    .target(
      name: "ExitCodeMap",
      dependencies: [
        "CommandKit", "TaskCrypto", "TaskVault", "AssistantKeys", "BackupRules", "TaskAttachments", "TaskPairing",
        "TaskSystem",
      ]
    ),
    // Every vector checker behind `taskkey vectors check` and the vector tests; not a library product, so no app
    // links it. It reaches the libraries' internals only through their `package` seams (ARCHITECTURE.md).
    .target(
      name: "TaskKeyVectors",
      dependencies: [
        "CZlib", "TaskCrypto", "TaskVault", "AssistantKeys", "BackupRules", "TaskAttachments", "TaskPairing",
        "TaskSystem",
      ]
    ),
    .target(
      name: "TaskKeyCLI",
      dependencies: [
        "CommandKit", "ExitCodeMap", "TaskCrypto", "TaskVault", "AssistantKeys", "BackupRules", "TaskAttachments",
        "TaskPairing", "TaskSystem", "TaskKeyVectors",
      ]
    ),
    .executableTarget(
      name: "taskkey",
      dependencies: ["TaskKeyCLI", "CommandKit", "TaskSystem"]
    ),

    // The benchmark: TaskKey against raw OpenSSL (in C) in the same run.
    .target(
      name: "CBenchBaseline",
      linkerSettings: [.linkedLibrary("crypto"), .linkedLibrary("sodium")]
    ),
    .executableTarget(
      name: "taskkey-bench",
      dependencies: ["TaskCrypto", "TaskVault", "AssistantKeys", "TaskAttachments", "CBenchBaseline"]
    ),

    // Helpers shared by the test targets: running the real binary, temp dirs, test secrets.
    .target(
      name: "TaskKeyTestSupport",
      dependencies: ["TaskCrypto"],
      path: "Tests/TaskKeyTestSupport"
    ),
    // Unit tests: each imports its own module (and lower ones it needs) and test support only; a target whose
    // tests generate or check vectors also imports TaskKeyVectors (the checkers and the files' schemas).
    .testTarget(
      name: "TaskSystemTests",
      dependencies: ["TaskSystem", "TaskSystemTesting", "TaskKeyTestSupport"]
    ),
    .testTarget(
      name: "TaskCryptoTests",
      dependencies: ["TaskCrypto", "TaskKeyTestSupport"]
    ),
    .testTarget(
      name: "TaskPairingTests",
      dependencies: ["TaskPairing", "TaskCrypto", "TaskSystem", "TaskKeyTestSupport"]
    ),
    .testTarget(
      name: "TaskAttachmentsTests",
      dependencies: [
        "TaskAttachments", "TaskCrypto", "TaskSystem", "TaskSystemTesting", "TaskKeyVectors", "TaskKeyTestSupport",
      ]
    ),
    .testTarget(
      name: "TaskVaultTests",
      dependencies: [
        "TaskVault", "TaskCrypto", "TaskSystem", "TaskSystemTesting", "TaskKeyVectors", "TaskKeyTestSupport",
      ]
    ),
    .testTarget(
      name: "AssistantKeysTests",
      dependencies: [
        "AssistantKeys", "TaskVault", "TaskCrypto", "TaskSystem", "TaskSystemTesting", "TaskKeyVectors",
        "TaskKeyTestSupport",
      ]
    ),
    .testTarget(
      name: "BackupRulesTests",
      dependencies: ["BackupRules", "TaskVault", "TaskCrypto", "TaskSystem", "TaskKeyTestSupport"]
    ),
    .testTarget(
      name: "CommandKitTests",
      dependencies: ["CommandKit"]
    ),
    .testTarget(
      name: "TaskKeyCLITests",
      dependencies: [
        "TaskKeyCLI", "CommandKit", "BackupRules", "TaskVault", "TaskCrypto", "TaskSystem", "TaskKeyVectors",
        "TaskKeyTestSupport",
      ]
    ),
    // The vectors target's own tests (the zlib reader, the Cobblestone checker), and the check that no shipped
    // library holds a checker, a vector decoder or a public test seam.
    .testTarget(
      name: "TaskKeyVectorsTests",
      dependencies: ["TaskKeyVectors", "TaskCrypto", "TaskKeyTestSupport"]
    ),
    // End-to-end tests: run the built `taskkey` binary and check stdout, stderr and exit code.
    .testTarget(
      name: "TaskKeyEndToEndTests",
      dependencies: ["taskkey", "BackupRules", "TaskVault", "TaskCrypto", "TaskKeyTestSupport"]
    ),
  ]
)
