import Foundation
import TaskCrypto
import TaskerHTTP

/// `http_test_server.py` running on 127.0.0.1 (over TLS with a certificate
/// and key), stopped when released.
final class LocalServer {
  let port: Int
  /// The certificate the server presents (for `localhost`), nil for plain HTTP.
  let certificate: String?
  private let process = Process()
  private let input = Pipe()

  init(certificate: String? = nil, key: String? = nil) throws {
    self.certificate = certificate
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
      "http_test_server.py"
    ).path
    let output = Pipe()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = [script] + [certificate, key].compactMap { $0 }
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    var line: [UInt8] = []
    let reader = output.fileHandleForReading
    while line.last != UInt8(ascii: "\n") {
      guard let byte = try reader.read(upToCount: 1), !byte.isEmpty else { break }
      line += byte
    }
    let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
      throw LocalServerFailure("the test server did not start: \(text)")
    }
    self.port = port
  }

  deinit {
    try? input.fileHandleForWriting.close()
    process.terminate()
    process.waitUntilExit()
  }

  /// `http://127.0.0.1:<port><path>` (or `https://<host>:<port><path>`).
  func endpoint(_ path: String, scheme: String = "http", host: String = "127.0.0.1") throws -> HTTPEndpoint {
    try HTTPEndpoint(parsing: "\(scheme)://\(host):\(port)\(path)")
  }

  /// The number of requests the server has received (asking is not counted).
  func requestCount() throws -> Int {
    let endpoint =
      certificate == nil ? try endpoint("/count") : try endpoint("/count", scheme: "https", host: "localhost")
    let limits = HTTPLimits(
      connectTimeoutSeconds: 10, totalTimeoutSeconds: 30, maximumResponseBytes: 1024, caFile: certificate)
    let request = HTTPRequest(method: "GET", endpoint: endpoint, headers: [], body: [], bearer: nil)
    let response = try HTTPClient().send(request, limits: limits, allowPlainHTTP: true)
    return Int(String(decoding: response.body, as: UTF8.self)) ?? -1
  }

  /// A port on 127.0.0.1 that nothing listens on (bound by a child, then
  /// released).
  static func closedPort() throws -> Int {
    let process = Process()
    let output = Pipe()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = [
      "-c", "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])",
    ]
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard let port = Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    else { throw LocalServerFailure("no free port") }
    return port
  }
}

/// A self-signed certificate for `localhost` only, made by `openssl req` in
/// a temporary directory removed when released.
final class SelfSignedCertificate {
  let directory: URL
  var certificate: String { directory.appendingPathComponent("cert.pem").path }
  var key: String { directory.appendingPathComponent("key.pem").path }

  init() throws {
    directory = FileManager.default.temporaryDirectory.appendingPathComponent("tasker-http-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
    process.arguments = [
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
      "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost", "-keyout", key, "-out", certificate,
    ]
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw LocalServerFailure("openssl req failed") }
  }

  deinit {
    try? FileManager.default.removeItem(at: directory)
  }
}

struct LocalServerFailure: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

extension SecureBytes {
  /// The bytes of `text` in a new locked buffer.
  static func text(_ text: String) throws -> SecureBytes {
    try Array(text.utf8).withUnsafeBytes { try SecureBytes(copying: $0) }
  }
}
