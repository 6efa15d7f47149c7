import CommandKit
import FoundationEssentials
import TaskCrypto
import TaskPairing
import TaskSystem
import TaskVault

/// `taskkey pair offer|join`: gives a second device this vault's
/// synchronisable keys over the local network, proven by a code read aloud
/// (docs/formats/pairing.md).
struct PairCommand: Command, CommandGroup {
  static let spec = CommandSpec(
    name: "pair", abstract: "Pair a second device on the local network with a spoken code.",
    discussion: """
      The device that has the keys runs 'taskkey pair offer' and reads its four-word
      code aloud; the new device runs 'taskkey pair join ADDR:PORT' and types it.
      CPace (ristretto255, SHA-512) turns the code into a key: someone on the network
      gets one guess per offer, never one to test offline, and a wrong guess ends the
      offer on both devices. Only the synchronisable store travels (note keys with
      their retirements, synchronisable items), never a device-only item or an
      assistant key. The offering device changes nothing; the new device's vault
      appears only when everything arrived and verified.
      """,
    example: """
      # On the laptop (it has the keys):
      taskkey pair offer
      # On the new desktop, with the address the laptop printed:
      taskkey pair join 192.168.1.20:41733
      """)
  static let subcommands: [any CommandDeclaration.Type] = [PairOfferCommand.self, PairJoinCommand.self]
}

/// `taskkey pair offer`.
struct PairOfferCommand: Command {
  static let listenOption = OptionSpec.value(
    "--listen", "ADDR:PORT", .text,
    help: "Listen on this address (an IP literal; repeatable). Default: every local-network address of this "
      + "machine (10/8, 172.16/12, 192.168/16, 169.254/16, 100.64/10, fc00::/7, fe80::/10) on one free port.",
    repeatable: true)
  static let waitOption = OptionSpec.value(
    "--wait", "D", .duration,
    help: "Wait at most D for the other device (\(DurationText.help), 1s to 10m; default 10m).")

  static let spec = CommandSpec(
    name: "offer",
    abstract: "Offer this vault's synchronisable keys to one device that proves the code; changes nothing here.",
    options: [listenOption, waitOption],
    json: JSONShape(
      fields: ["event", "addresses", "code", "expires_at", "key_count", "item_count", "peer", "verification"],
      help: "JSON lines, one object per event: {event: \"offer\", addresses, code, expires_at, key_count, "
        + "item_count}, then {event: \"connected\", peer}, {event: \"confirmed\", verification}, and "
        + "{event: \"paired\", peer, verification} (docs/json-output.md, rule 2)."),
    discussion: """
      The vault must be unlocked. One device may connect: the listener closes as soon
      as it does, so a second one is refused, and the offer ends with that device's
      attempt whatever it brings. Both screens then show the same six-digit
      verification string, which a careful user compares. The code, the address and
      the progress are notes on standard error (-q leaves them out); with --json they
      are JSON lines on standard output, one object per event.
      """,
    example: """
      taskkey pair offer
      taskkey pair offer --listen 192.168.1.20:41733 --wait 2m
      """)

  let listen: [String]
  let waitSeconds: Int64
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    listen = arguments.values(Self.listenOption)
    let wait = try durationOption(arguments, Self.waitOption)?.seconds ?? 600
    guard (1...600).contains(wait) else { throw arguments.usageError("--wait takes 1s to 10m") }
    waitSeconds = wait
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ streams: StandardStreams) throws {
    let requested = try listen.map(SocketAddress.init(parsing:))
    let vault = try openVault(streams)
    let (store, summary) = try vault.synchronisableStoreForPairing()
    let addresses = requested.isEmpty ? try SocketAddress.localNetwork(port: 0) : requested
    guard !addresses.isEmpty else { throw CLIError.noLocalNetwork }
    let listener = try TCPListener(addresses: addresses, skippingUnavailable: requested.isEmpty)
    var limits = PairingLimits()
    limits.offerWait = Double(waitSeconds)
    let code = PairingCode.generate()
    let expires = TimeStamp.utc(Date().timeIntervalSince1970.rounded(.down) + Double(waitSeconds))
    let shown = listener.addresses.map(\.description)
    if json {
      try streams.printJSON(
        .object([
          "event": "offer", "addresses": .array(shown.map(JSONValue.string)), "code": .string(code.spoken),
          "expires_at": .string(expires), "key_count": .integer(Int64(summary.keyIDs.count)),
          "item_count": .integer(Int64(summary.itemNames.count)),
        ]))
    } else {
      // Notes on standard error (so a failed offer writes nothing to standard
      // output); -q leaves them out, and a script reads --json instead.
      streams.note(
        "Offering \(summary.keyIDs.count) note key(s) and \(summary.itemNames.count) synchronisable item(s); "
          + "device-only items and assistant keys stay here.")
      streams.note("Listening on \(shown.joined(separator: ", ")) until \(expires).")
      streams.note("Code: \(code.spoken)")
      streams.note("On the new device run: taskkey pair join \(shown[0])")
    }
    let outcome = try PairingOffer(listener: listener, code: code, limits: limits).run(
      store: store,
      connected: { peer in
        if json {
          try? streams.printJSON(.object(["event": "connected", "peer": .string(peer.description)]))
        } else {
          streams.note("Connected: \(peer); checking the code...")
        }
      },
      confirmed: { verification in
        if json {
          try? streams.printJSON(.object(["event": "confirmed", "verification": .string(verification)]))
        } else {
          streams.printError("Verification: \(verification) (the other screen shows the same)")
        }
      })
    if json {
      return try streams.printJSON(
        .object([
          "event": "paired", "peer": .string(outcome.peer.description),
          "verification": .string(outcome.verification),
        ]))
    }
    try streams.print("Paired with \(outcome.peer): it holds this vault's note keys now. Nothing changed here.")
  }
}

/// `taskkey pair join`.
struct PairJoinCommand: Command {
  static let codeFileOption = OptionSpec.value(
    "--code-file", "F", .file,
    help: "Read the code from F (first line), a regular file of mode 0600 owned by you. Without it, the "
      + "terminal is asked with echo off.")

  static let spec = CommandSpec(
    name: "join", abstract: "Join the vault of a device that offers, with its code; makes this device's vault.",
    arguments: [ArgumentSpec(name: "ADDR:PORT", kind: .text, help: "The address the offering device printed.")],
    options: [codeFileOption, InitCommand.kdfOption] + PassphraseSource.options + [PassphraseSource.acceptWeakOption],
    json: JSONShape(
      fields: ["directory", "vault_id", "primary_key_id", "key_ids", "item_count", "offerer", "verification"],
      help: "{directory, vault_id, primary_key_id, key_ids, item_count, offerer, verification}."),
    discussion: """
      There must be no vault here yet. The code is read and checked against the word
      list before anything is sent, so a typing mistake does not spend the offer's
      one guess. The passphrase is this device's own, for its new vault (asked twice
      on a terminal); it need not be the other device's. The vault is written only
      after the keys arrived and verified, and left unlocked.
      """,
    example: """
      taskkey pair join 192.168.1.20:41733
      """)

  let address: String
  let codeFile: String?
  let preset: KDFPreset
  let acceptWeak: Bool
  let passphrase: PassphraseSource
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    address = arguments.positionals[0]
    codeFile = arguments.value(Self.codeFileOption)
    preset = arguments.value(InitCommand.kdfOption) == "fast-test-only" ? .fastTestOnly : .calibrated
    acceptWeak = arguments.flag(PassphraseSource.acceptWeakOption)
    passphrase = try PassphraseSource(arguments)
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ streams: StandardStreams) throws {
    let offerer = try SocketAddress(parsing: address)
    let directory = try vaultDirectory(streams)
    if ProcessIO.exists(VaultLayout(directory: directory).vaultFile) {
      throw TaskVaultError.alreadyInitialised(path: directory)
    }
    try passphrase.checkAvailable()
    let code = try readCode()
    let secret = try passphrase.read(prompt: "Passphrase for this device's new vault: ", confirm: true)
    if let reason = weakness(of: secret) {
      guard acceptWeak else { throw CLIError.weakPassphrase(reason: reason) }
      streams.note("taskkey: warning: weak passphrase (\(reason)); accepted because of --accept-weak-passphrase")
    }
    var written: (vault: Vault, summary: PairedStoreSummary)?
    let outcome = try PairingJoin(address: offerer, code: code).run(
      confirmed: { verification in
        if !json { streams.printError("Verification: \(verification) (the other screen shows the same)") }
      },
      accept: { store in
        if preset == .calibrated { streams.terminalNote("Calibrating the passphrase KDF (about a second)...") }
        written = try Vault.createPaired(at: directory, passphrase: secret, preset: preset, encoding: store)
      })
    // `run` returns only after `accept` wrote the vault.
    let (vault, summary) = written!
    let status = try vault.status()
    if json {
      return try streams.printJSON(
        .object([
          "directory": .string(directory), "vault_id": .string(status.vaultID),
          "primary_key_id": .string(summary.primaryID.hex),
          "key_ids": .array(summary.keyIDs.map { .string($0.hex) }),
          "item_count": .integer(Int64(summary.itemNames.count)), "offerer": .string(outcome.peer.description),
          "verification": .string(outcome.verification),
        ]))
    }
    try streams.print(
      "Joined: \(summary.keyIDs.count) note key(s) and \(summary.itemNames.count) item(s) from \(outcome.peer), "
        + "in a new vault at \(directory).")
    try streams.print("Primary note key: \(summary.primaryID.hex)")
    try streams.print("It is unlocked until reboot or 'taskkey lock'.")
  }

  private func readCode() throws -> PairingCode {
    let limit = 256
    let tooLong = { CLIError.codeTooLong(limit: limit) as Error }
    let bytes: SecureBytes
    if let codeFile {
      bytes = try ProcessIO.readOwnerOnly(codeFile, limit: limit, firstLine: true, tooLong: tooLong)
    } else {
      guard Terminal.isAvailable else { throw CLIError.noTerminal }
      bytes = try Terminal.ask(prompt: "Code (four words): ", limit: limit, tooLong: tooLong)
    }
    let text = bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    return try PairingCode(reading: text)
  }
}
