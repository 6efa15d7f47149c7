// swift-tools-version:5.9
// Tasker for Linux: the task app that links TaskKey. It depends on the
// TaskKey package by path, exactly as any outside app would, and on
// Debian's libsqlite3 through a system-library target.
import PackageDescription

/// Dependencies on products of the TaskKey package, by name (the targets
/// after TaskerCore, which spells them out).
func taskKey(_ names: String...) -> [Target.Dependency] {
  names.map { .product(name: $0, package: "TaskKey") }
}

let package = Package(
  name: "Tasker",
  products: [
    .library(name: "TaskerCore", targets: ["TaskerCore"]),
    .executable(name: "tasker", targets: ["tasker"]),
    .executable(name: "tasker-bench", targets: ["tasker-bench"]),
    .executable(name: "tasker-gate-bench", targets: ["tasker-gate-bench"]),
  ],
  dependencies: [
    .package(name: "TaskKey", path: "../..")
  ],
  targets: [
    // SQLite from Debian (libsqlite3-dev), found through pkg-config; only the
    // store's files in TaskerCore import it.
    .systemLibrary(
      name: "CSQLite",
      pkgConfig: "sqlite3",
      providers: [.apt(["libsqlite3-dev"])]
    ),
    // libcurl from Debian (libcurl4-openssl-dev for the header, libcurl.so.4
    // at run time), not linked: a small C loader opens it with dlopen when
    // TaskerHTTP sends its first request, so no other command pays for
    // loading it and its ~30 libraries. Only TaskerHTTP imports it.
    .target(name: "CCurl"),
    // The one HTTP client: requests through libcurl with TLS verified, no
    // redirects, no proxy, bounded; only the planning-provider and sync code
    // may import it.
    .target(
      name: "TaskerHTTP",
      dependencies: ["CCurl", .product(name: "TaskCrypto", package: "TaskKey")]
    ),
    // The store, the model, sealing through TaskKey, and the PlanContext builder.
    // Spelled out as an outside app would write it: README quotes this target.
    .target(
      name: "TaskerCore",
      dependencies: [
        "CSQLite",
        .product(name: "TaskSystem", package: "TaskKey"),
        .product(name: "CommandKit", package: "TaskKey"),
        .product(name: "TaskCrypto", package: "TaskKey"),
        .product(name: "TaskVault", package: "TaskKey"),
        .product(name: "TaskAttachments", package: "TaskKey"),
        .product(name: "AssistantKeys", package: "TaskKey"),
      ]
    ),
    // Planning providers: provider records in the vault, request bodies
    // built from PlanContext alone, answers checked before use, sent
    // through TaskerHTTP.
    .target(
      name: "TaskerPlanning",
      dependencies: ["TaskerCore", "TaskerHTTP"] + taskKey("CommandKit", "TaskVault", "TaskCrypto")
    ),
    // Layer 1 sync: the storage formats, the merge, the folder target and
    // the engine; what it writes is sealed under the vault's sync key.
    .target(
      name: "TaskerSync",
      dependencies: ["TaskerCore", "TaskerHTTP"] + taskKey("CommandKit", "TaskCrypto", "TaskSystem", "TaskVault")
    ),
    // libmicrohttpd from Debian (libmicrohttpd-dev), not linked: a small C
    // loader opens it with dlopen when `tasker mcp --http` starts a server, so
    // no other command pays for loading it and its TLS libraries. Only the
    // gate's HTTP binding file imports it.
    .target(name: "CMicroHTTPD"),
    // The assistant gate (`tasker mcp`): MCP over stdio and Streamable HTTP,
    // keys checked by AssistantKeys, the decision, approvals and receipts.
    .target(
      name: "TaskerGate",
      dependencies: ["TaskerCore", "CMicroHTTPD"]
        + taskKey("CommandKit", "AssistantKeys", "TaskVault", "TaskSystem", "TaskCrypto")
    ),
    // The command layer: parsing, output, the one map from errors to exit codes.
    .target(
      name: "TaskerCLI",
      dependencies: ["TaskerCore", "TaskerGate", "TaskerPlanning", "TaskerHTTP", "TaskerSync"]
        + taskKey(
          "CommandKit", "ExitCodeMap", "TaskSystem", "TaskCrypto", "TaskVault", "TaskAttachments", "AssistantKeys")
    ),
    .executableTarget(
      name: "tasker",
      dependencies: ["TaskerCLI"] + taskKey("CommandKit", "TaskSystem")
    ),
    // Tasker at scale against SQLite and process-start floors: `make app-bench`.
    .executableTarget(
      name: "tasker-bench",
      dependencies: ["TaskerCore"] + taskKey("TaskCrypto", "TaskVault")
    ),
    // What checking an assistant key costs per request, next to its floor
    // (`make gate-load`).
    .executableTarget(
      name: "tasker-gate-bench",
      dependencies: ["TaskerGate", "TaskerCore"] + taskKey("AssistantKeys", "TaskCrypto", "TaskVault")
    ),
    // Helpers shared by the test targets: temporary homes, running the binaries.
    .target(
      name: "TaskerTestSupport",
      dependencies: ["TaskerCore"] + taskKey("TaskCrypto", "TaskVault"),
      path: "Tests/TaskerTestSupport"
    ),
    .testTarget(
      name: "TaskerCoreTests",
      dependencies: ["TaskerCore", "TaskerTestSupport"]
        + taskKey("AssistantKeys", "TaskAttachments", "TaskCrypto", "TaskSystem", "TaskSystemTesting", "TaskVault")
    ),
    .testTarget(
      name: "TaskerHTTPTests",
      dependencies: ["TaskerHTTP"] + taskKey("TaskCrypto"),
      exclude: ["http_test_server.py"]
    ),
    .testTarget(
      name: "TaskerPlanningTests",
      dependencies: ["TaskerPlanning", "TaskerCore", "TaskerHTTP", "TaskerTestSupport"]
        + taskKey("CommandKit", "TaskCrypto", "TaskVault")
    ),
    .testTarget(
      name: "TaskerSyncTests",
      dependencies: ["TaskerSync", "TaskerCore", "TaskerTestSupport"]
        + taskKey("CommandKit", "TaskCrypto", "TaskSystem", "TaskVault")
    ),
    .testTarget(
      name: "TaskerGateTests",
      dependencies: ["TaskerGate", "TaskerCore", "TaskerTestSupport"]
        + taskKey("AssistantKeys", "CommandKit", "TaskCrypto")
    ),
    .testTarget(
      name: "TaskerEndToEndTests",
      dependencies: ["TaskerTestSupport", "tasker"] + taskKey("taskkey", "TaskCrypto", "TaskKeyTestSupport")
    ),
  ]
)
