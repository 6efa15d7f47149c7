import Glibc

/// An IP address literal and a TCP port: `192.168.1.20:50123` or
/// `[fe80::1%2]:50123`. Never a host name: nothing is looked up, so no
/// resolver is asked and nothing leaves the machine to parse an address.
///
/// `description` is the canonical text (`inet_ntop` form, IPv6 in
/// brackets with its numeric zone), the same on both ends of a connection
/// for the same address; pairing binds it into its transcript.
public struct SocketAddress: Equatable, Hashable, Sendable, CustomStringConvertible {
  /// The canonical address literal, without brackets or port.
  public let host: String
  /// The TCP port (0 asks the kernel for a free one when listening).
  public let port: UInt16
  /// Whether the address is IPv6.
  public let isIPv6: Bool
  /// The IPv6 zone (interface index) of a link-local address, else 0.
  public let zone: UInt32
  private let bytes: [UInt8]

  /// Parses `ADDR:PORT`, `[V6ADDR]:PORT` or `[V6ADDR%ZONE]:PORT` (ZONE a
  /// number or an interface name).
  ///
  /// - Throws: `SystemError.invalidAddress` naming the text.
  public init(parsing text: String) throws {
    func invalid(_ reason: String) -> SystemError { .invalidAddress(text: text, reason: reason) }
    let hostPart: Substring
    let portPart: Substring
    if text.hasPrefix("[") {
      guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
        throw invalid("an IPv6 address is written [ADDR]:PORT")
      }
      hostPart = text[text.index(after: text.startIndex)..<close]
      portPart = text[text.index(close, offsetBy: 2)...]
    } else {
      guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else {
        throw invalid("expected ADDR:PORT (an IPv6 address in brackets)")
      }
      hostPart = text[..<colon]
      portPart = text[text.index(after: colon)...]
    }
    guard !portPart.isEmpty, portPart.count <= 5, portPart.allSatisfy({ $0.isASCII && $0.isNumber }),
      let port = UInt16(portPart), !(portPart.count > 1 && portPart.hasPrefix("0"))
    else { throw invalid("the port must be a number from 0 to 65535") }
    var zone: UInt32 = 0
    var literal = String(hostPart)
    if text.hasPrefix("["), let percent = hostPart.firstIndex(of: "%") {
      let name = String(hostPart[hostPart.index(after: percent)...])
      literal = String(hostPart[..<percent])
      if let number = UInt32(name) {
        zone = number
      } else {
        zone = if_nametoindex(name)
        guard zone != 0 else { throw invalid("no network interface is named '\(name)'") }
      }
    }
    var v4 = in_addr()
    var v6 = in6_addr()
    if !text.hasPrefix("["), inet_pton(AF_INET, literal, &v4) == 1 {
      self.init(bytes: withUnsafeBytes(of: &v4) { [UInt8]($0) }, port: port, isIPv6: false, zone: 0)
    } else if text.hasPrefix("["), inet_pton(AF_INET6, literal, &v6) == 1 {
      self.init(bytes: withUnsafeBytes(of: &v6) { [UInt8]($0) }, port: port, isIPv6: true, zone: zone)
    } else {
      throw invalid("'\(hostPart)' is not an IP address literal (host names are not looked up)")
    }
  }

  /// An address from its raw bytes (4 or 16, network order).
  init(bytes: [UInt8], port: UInt16, isIPv6: Bool, zone: UInt32) {
    self.bytes = bytes
    self.port = port
    self.isIPv6 = isIPv6
    self.zone = isIPv6 ? zone : 0
    var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
    bytes.withUnsafeBytes { raw in
      _ = inet_ntop(isIPv6 ? AF_INET6 : AF_INET, raw.baseAddress, &text, socklen_t(text.count))
    }
    self.host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// The same address with another port.
  public func with(port: UInt16) -> SocketAddress {
    SocketAddress(bytes: bytes, port: port, isIPv6: isIPv6, zone: zone)
  }

  /// The canonical text: `1.2.3.4:5`, `[::1]:5`, `[fe80::1%2]:5`.
  public var description: String {
    guard isIPv6 else { return "\(host):\(port)" }
    return zone == 0 ? "[\(host)]:\(port)" : "[\(host)%\(zone)]:\(port)"
  }

  /// The canonical text without the IPv6 zone: `1.2.3.4:5`, `[fe80::1]:5`.
  /// Both ends of a link-local connection write the same text, though
  /// each names the link by its own interface number.
  public var textWithoutZone: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

  /// Whether this is a loopback address (127.0.0.0/8 or ::1).
  public var isLoopback: Bool {
    isIPv6 ? bytes == [UInt8](repeating: 0, count: 15) + [1] : bytes[0] == 127
  }

  /// Calls `body` with this address as a `sockaddr` and its length.
  func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> Result) rethrows -> Result {
    if isIPv6 {
      var address = sockaddr_in6()
      address.sin6_family = sa_family_t(AF_INET6)
      address.sin6_port = port.bigEndian
      address.sin6_scope_id = zone
      withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: bytes) }
      return try withUnsafePointer(to: &address) {
        try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          try body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
      }
    }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: bytes) }
    return try withUnsafePointer(to: &address) {
      try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        try body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
  }

  /// The address a `sockaddr_storage` holds, or nil for another family.
  init?(storage: sockaddr_storage) {
    var storage = storage
    switch Int32(storage.ss_family) {
    case AF_INET:
      let address = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
      var raw = address.sin_addr
      self.init(
        bytes: withUnsafeBytes(of: &raw) { [UInt8]($0) }, port: UInt16(bigEndian: address.sin_port), isIPv6: false,
        zone: 0)
    case AF_INET6:
      let address = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
      var raw = address.sin6_addr
      let bytes = withUnsafeBytes(of: &raw) { [UInt8]($0) }
      // An IPv4 peer on a dual-stack socket is shown as the IPv4 address it is.
      if bytes.prefix(12) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] {
        self.init(bytes: Array(bytes.suffix(4)), port: UInt16(bigEndian: address.sin6_port), isIPv6: false, zone: 0)
      } else {
        self.init(
          bytes: bytes, port: UInt16(bigEndian: address.sin6_port), isIPv6: true, zone: address.sin6_scope_id)
      }
    default:
      return nil
    }
  }

  /// Whether the address belongs to a local network: RFC 1918 and
  /// RFC 6598 IPv4 ranges, IPv4 link-local, IPv6 unique-local (fc00::/7)
  /// and link-local (fe80::/10). Loopback and public addresses are not.
  public var isLocalNetwork: Bool {
    if isIPv6 { return bytes[0] & 0xFE == 0xFC || (bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80) }
    switch (bytes[0], bytes[1]) {
    case (10, _), (192, 168), (169, 254): return true
    case (172, 16...31), (100, 64...127): return true
    default: return false
    }
  }

  /// The local-network addresses of this machine's interfaces that are up
  /// (`isLocalNetwork`), IPv4 first, each with `port`; the addresses
  /// `taskkey pair offer` listens on by default.
  ///
  /// - Throws: `SystemError.failed` for `getifaddrs`.
  public static func localNetwork(port: UInt16) throws -> [SocketAddress] {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0 else { throw SystemError.failed(call: "getifaddrs", path: "", errno: errno) }
    defer { freeifaddrs(list) }
    var found: [SocketAddress] = []
    var entry = list
    while let current = entry {
      defer { entry = current.pointee.ifa_next }
      let flags = current.pointee.ifa_flags
      guard flags & UInt32(IFF_UP) != 0, flags & UInt32(IFF_LOOPBACK) == 0,
        let raw = current.pointee.ifa_addr
      else { continue }
      var storage = sockaddr_storage()
      let size =
        Int32(raw.pointee.sa_family) == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size
      guard [AF_INET, AF_INET6].contains(Int32(raw.pointee.sa_family)) else { continue }
      withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: raw, count: size)) }
      if let address = SocketAddress(storage: storage)?.with(port: port), address.isLocalNetwork,
        !found.contains(address)
      {
        found.append(address)
      }
    }
    return found.filter { !$0.isIPv6 } + found.filter(\.isIPv6)
  }
}
