/// Where `tasker mcp --http` listens: `[IPv4:]PORT`, 127.0.0.1 by default.
public struct GateListenAddress: Equatable, Sendable, CustomStringConvertible {
  /// The address's four bytes.
  public let address: [UInt8]
  /// The TCP port, 1 to 65535.
  public let port: UInt16

  /// Parses `PORT` or `IPv4:PORT` (dotted decimal, no leading zeros).
  ///
  /// - Parameter text: the argument of `--http`.
  /// - Throws: `GateError.invalidListenAddress` for anything else.
  public init(_ text: String) throws {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count <= 2, let portText = parts.last, let port = Self.number(portText, limit: 65_535), port > 0 else {
      throw GateError.invalidListenAddress(text)
    }
    var address: [UInt8] = [127, 0, 0, 1]
    if parts.count == 2 {
      let octets = parts[0].split(separator: ".", omittingEmptySubsequences: false)
      let values = octets.compactMap { Self.number($0, limit: 255) }
      guard octets.count == 4, values.count == 4 else { throw GateError.invalidListenAddress(text) }
      address = values.map { UInt8($0) }
    }
    self.address = address
    self.port = UInt16(port)
  }

  /// Whether the address is a loopback address (127.0.0.0/8).
  public var isLoopback: Bool { address[0] == 127 }

  /// `a.b.c.d:port`.
  public var description: String { address.map(String.init).joined(separator: ".") + ":\(port)" }

  private static func number(_ text: Substring, limit: Int) -> Int? {
    guard !text.isEmpty, text.count <= 5, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
      text == "0" || text.first != "0", let value = Int(text), value <= limit
    else { return nil }
    return value
  }
}
