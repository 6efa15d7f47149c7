import Foundation
import TaskKeyTestSupport
import TaskSystem

/// Pairing scenarios for the exit-code and JSON tests: a peer on 127.0.0.1
/// that answers a joiner's `start` with `abort` 1 (as an offerer that found
/// the code wrong), and a whole pairing of two homes through the binary.
enum PairingPeer {
  /// `taskkey pair join` against a peer that aborts: exit 26.
  static func abortingJoin(home: String) throws -> ProcessResult {
    let listener = try TCPListener(addresses: [try SocketAddress(parsing: "127.0.0.1:0")])
    let address = listener.addresses[0].description
    let peer = Thread {
      guard let connection = try? listener.accept(deadline: .after(seconds: 20)) else { return }
      _ = try? connection.receive(count: 56, deadline: .after(seconds: 20))
      try? connection.send(Array("TKPAIR".utf8) + [1, 0x7F, 1], deadline: .after(seconds: 5))
      connection.close()
    }
    peer.start()
    try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    let codeFile = home + "/code"
    let passphraseFile = home + "/pass"
    try writePrivate(codeFile, "acid acorn zone zoom\n")
    try writePrivate(passphraseFile, "correct horse battery\n")
    return try TaskKeyBinary.run(
      [
        "pair", "join", address, "--code-file", codeFile, "--passphrase-file", passphraseFile, "--kdf",
        "fast-test-only", "--accept-weak-passphrase",
      ], environment: ["TASKKEY_HOME": home + "/keys"])
  }

  /// A whole pairing: `pair offer --json` from `offering` on 127.0.0.1,
  /// then `pair join --json` into a new home `joining` with the code the
  /// offer's first line gave. Returns both outputs once both ended.
  static func pair(offering: String, joining: String) throws -> (
    offerStatus: Int32, offerLines: [[UInt8]], offerErrors: String, join: ProcessResult
  ) {
    let offer = Process()
    offer.executableURL = TaskKeyBinary.url
    offer.arguments = ["pair", "offer", "--listen", "127.0.0.1:0", "--wait", "30s", "--json"]
    offer.environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TASKKEY_HOME": offering]
    let output = Pipe()
    let errors = Pipe()
    offer.standardOutput = output
    offer.standardError = errors
    try offer.run()
    var first = Data()
    while !first.contains(UInt8(ascii: "\n")) {
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      first.append(chunk)
    }
    let event = try JSONSerialization.jsonObject(with: first.prefix { $0 != UInt8(ascii: "\n") }) as? [String: Any]
    let code = event?["code"] as? String ?? ""
    let address = (event?["addresses"] as? [String])?.first ?? ""
    try FileManager.default.createDirectory(atPath: joining, withIntermediateDirectories: true)
    try writePrivate(joining + "/code", code + "\n")
    try writePrivate(joining + "/pass", "correct horse battery\n")
    let joined = try TaskKeyBinary.run(
      [
        "pair", "join", address, "--code-file", joining + "/code", "--passphrase-file", joining + "/pass", "--kdf",
        "fast-test-only", "--accept-weak-passphrase", "--json",
      ], environment: ["TASKKEY_HOME": joining + "/keys"])
    let rest = output.fileHandleForReading.readDataToEndOfFile()
    let stderr = errors.fileHandleForReading.readDataToEndOfFile()
    offer.waitUntilExit()
    let lines = [UInt8](first + rest).split(separator: UInt8(ascii: "\n")).map { Array($0) }
    return (offer.terminationStatus, lines, String(decoding: stderr, as: UTF8.self), joined)
  }
}
