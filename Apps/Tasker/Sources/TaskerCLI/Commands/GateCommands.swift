import AssistantKeys
import CommandKit
import Dispatch
import FoundationEssentials
import TaskSystem
import TaskVault
import TaskerCore
import TaskerGate

/// `tasker mcp [--http [ADDR:]PORT [--allow-host NAME]...]`: the assistant gate.
struct McpCommand: Command {
  static let http = OptionSpec.value(
    "--http", "[ADDR:]PORT",
    help: "Serve Streamable HTTP at http://ADDR:PORT/mcp instead of stdio; ADDR is 127.0.0.1 unless given. Every "
      + "request needs 'Authorization: Bearer tk_…'; there is no trusted mode over HTTP. SIGINT or SIGTERM stops it: "
      + "the running requests finish and the reads it reserved and did not spend are given back.")
  static let allowHost = OptionSpec.value(
    "--allow-host", "NAME",
    help: "With --http: also serve requests whose Host header is NAME:PORT (a DNS name or IPv4 address, no port), "
      + "for a server reached beyond loopback. Without it only 127.0.0.1, localhost, [::1] and the listening address "
      + "are served; any other Host is answered 421, against DNS rebinding.", repeatable: true)
  static let spec = CommandSpec(
    name: "mcp", abstract: "Serve MCP to assistants: stdio (trusted without a key) or HTTP (a key on every request).",
    options: [http, allowHost],
    discussion: "TASKER_ASSISTANT_KEY (stdio): run as the assistant this key belongs to; or TASKER_ASSISTANT_KEY_FILE: "
      + "the same, with the key read from this file (mode 0600, owned by you), so a host's configuration names a "
      + "file instead of holding the key; both set is refused. A key that is malformed, unknown, revoked, expired or "
      + "cannot be checked, or a key file that is missing or readable by others, ends the command with one line on "
      + "standard error before anything is served. Without either, stdio runs in trusted mode, as the user: that is "
      + "for your own scripts, never for an assistant or LLM host.",
    example: """
      tasker mcp
      tasker mcp --http 8765
      tasker mcp --http 0.0.0.0:8765 --allow-host tasker.lan
      """)

  let listen: GateListenAddress?
  let allowedHosts: [String]

  init(_ arguments: ParsedArguments) throws {
    listen = try arguments.value(Self.http).map { try GateListenAddress($0) }
    allowedHosts = try arguments.values(Self.allowHost).map { try GateHTTPAdmission.allowedHost($0) }
    if listen == nil && !allowedHosts.isEmpty { throw arguments.usageError("--allow-host needs --http") }
  }

  func run(_ context: CommandContext) throws {
    // The vault of this command's environment, for keys, lineage and the lock check alike.
    let vault = Vault.defaultDirectory(environment: context.environment)
    let authenticator = GateAuthenticator(vaultDirectory: vault)
    if let listen { return try serveHTTP(listen, authenticator: authenticator, vault: vault, context: context) }
    let toolbox: GateToolbox
    var reverify: (() -> Result<GateIdentity, AssistantKeyError>)?
    if let key = try GateKeySource.key(in: context.environment) {
      // The key is checked before the store is opened or anything is read.
      let identity: GateIdentity
      switch authenticator.verify(key) {
      case .success(let verified): identity = verified
      case .failure(let error): throw GateError.keyRefused(error)
      }
      toolbox = GateToolbox(store: try context.store(create: true), identity: identity, vaultDirectory: vault)
      reverify = { authenticator.verify(key) }
    } else {
      toolbox = GateToolbox.trusted(store: try context.store(create: true), vaultDirectory: vault)
    }
    let lines = LineBuffer(limit: GateStdio.maximumLine)
    GateStdio.serve(
      toolbox: toolbox, reverify: reverify, readLine: { Self.nextLine(of: lines) },
      write: { line in try? FileDescriptor.standardOutput.write(Array((line + "\n").utf8)) })
  }

  /// The next line of standard input as bytes; nil at the end or when
  /// standard input cannot be read. A line past the limit is read to its
  /// newline and dropped, never kept.
  static func nextLine(of lines: LineBuffer) -> GateStdio.InputLine? {
    switch try? lines.nextLine(from: .standardInput) {
    case .line(let bytes)?: return .line(Array(bytes))
    case .tooLong?:
      guard (try? lines.skipLine(from: .standardInput)) != nil else { return nil }
      return .tooLong
    case .end?, nil: return nil
    }
  }

  private func serveHTTP(
    _ listen: GateListenAddress, authenticator: GateAuthenticator, vault: String?, context: CommandContext
  ) throws {
    // The first store creates or migrates the database; each of the
    // server's threads gets a connection of its own from the pool, opened
    // now. Their commits leave checkpoints to a timer on one more
    // connection, so no call waits behind a checkpoint's sync.
    let limits = MicroHTTPServer.Limits()
    let home = try context.home()
    let environment = context.environment
    let open = { try TaskStore(home: home, keys: VaultKeySource(environment: environment), create: false) }
    let opened = [try context.store(create: true)] + (try (1..<limits.threads).map { _ in try open() })
    for store in opened { try store.leaveCheckpointsToCaller() }
    let stores = GateStorePool(stores: opened) {
      let more = try open()
      try more.leaveCheckpointsToCaller()
      return more
    }
    let checkpoints = try Self.checkpointEvery(milliseconds: 100, store: try open(), stores: stores)
    let endpoint = GateHTTPEndpoint(
      path: "/mcp", admission: GateHTTPAdmission(listen: listen, allowedHosts: allowedHosts),
      instructions: GateInstructions.text, authenticate: authenticator.verify,
      makeToolbox: { GateToolbox(stores: stores, identity: $0, vaultDirectory: vault) })
    let server = try MicroHTTPServer(
      address: listen.address, port: listen.port, limits: limits, handler: endpoint.respond)
    if !listen.isLoopback {
      context.printError("tasker: warning: \(listen) is not a loopback address; keys cross the network in clear")
    }
    context.printError("tasker: serving MCP at http://\(listen)/mcp; every request needs a bearer key")
    // Serves on libmicrohttpd's threads until SIGINT or SIGTERM.
    let stop = DispatchSemaphore(value: 0)
    StopSignals.leaveToSources()
    let signals = StopSignals.numbers.map { number in
      let source = DispatchSource.makeSignalSource(signal: number, queue: DispatchQueue(label: "tasker.gate.stop"))
      source.setEventHandler { stop.signal() }
      source.resume()
      return source
    }
    withExtendedLifetime((checkpoints, signals)) { stop.wait() }
    // No new request is taken, the running ones finish, and the reads
    // reserved and not spent are given back (SECURITY.md 8.6).
    server.stop()
    checkpoints.cancel()
    stores.giveBackAllReads()
    context.printError("tasker: stopped")
  }

  /// A timer that, every `milliseconds` on a queue of its own, gives back
  /// the reads of `stores`' idle blocks and runs a passive checkpoint of
  /// `store`; a failed one is left for the next.
  static func checkpointEvery(milliseconds: Int, store: TaskStore, stores: GateStorePool) throws
    -> DispatchSourceTimer
  {
    let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "tasker.gate.checkpoint"))
    timer.schedule(deadline: .now() + .milliseconds(milliseconds), repeating: .milliseconds(milliseconds))
    timer.setEventHandler {
      stores.giveBackIdleReads()
      try? store.checkpointLog()
    }
    timer.resume()
    return timer
  }
}
