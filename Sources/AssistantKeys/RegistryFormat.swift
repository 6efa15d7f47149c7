import FoundationEssentials
import TaskCrypto

/// One key's line in the registry.
struct RegistryEntry: Equatable {
  /// What has been decided about revocation.
  enum Revocation: Equatable {
    /// Not revoked.
    case none
    /// Verifies until the time, then is revoked by itself (rotation overlap).
    case until(Int64)
    /// Revoked at the time; permanent.
    case revoked(Int64)
  }

  var id: AssistantKeyID
  var digest: SHA256Digest
  var created: Int64
  var expires: Int64?
  var revocation: Revocation
  var trust: TrustLevel
  var name: String
  var grants: [String]

  /// Whether the key is revoked at `now`, counting an ended overlap.
  func isRevoked(at now: Int64) -> Bool {
    switch revocation {
    case .none: return false
    case .until(let time): return now >= time
    case .revoked: return true
    }
  }

  /// Turns an ended overlap into a permanent revocation.
  mutating func settle(at now: Int64) {
    if case .until(let time) = revocation, now >= time { revocation = .revoked(time) }
  }

  /// The verify decision for this key at `now`: revoked (including an
  /// ended overlap) before expired, else the identity.
  func verdict(at now: Int64) throws(AssistantKeyError) -> AssistantIdentity {
    if isRevoked(at: now) { throw .revoked(id) }
    if let expires, now >= expires { throw .expired(id) }
    var end = expires
    if case .until(let time) = revocation { end = min(end ?? time, time) }
    return AssistantIdentity(
      id: id, name: name, trust: trust, grants: grants,
      expires: end.map { Date(timeIntervalSince1970: TimeInterval($0)) })
  }
}

/// A parsed registry with its index by digest: a verify is one dictionary
/// lookup, whose final equality (`SHA256Digest ==`) is constant time.
struct RegistryIndex {
  let contents: RegistryFormat.Contents
  private let positionByDigest: [SHA256Digest: Int]

  init(_ contents: RegistryFormat.Contents) {
    self.contents = contents
    var positions = [SHA256Digest: Int](minimumCapacity: contents.entries.count)
    for (position, entry) in contents.entries.enumerated() { positions[entry.digest] = position }
    self.positionByDigest = positions
  }

  /// The entry whose digest is `digest`, or nil.
  func entry(for digest: SHA256Digest) -> RegistryEntry? {
    positionByDigest[digest].map { contents.entries[$0] }
  }
}

/// The registry file, version 1 (docs/formats/registry.md), still read
/// and replaced by version 2 at the next write:
///
///     "taskkey assistant-key registry v1" LF
///     "generation " <decimal> LF
///     *( "key " id SP digest SP created SP expires SP revocation SP trust SP name SP grants LF )
///     "mac " <base64 of HMAC-SHA256(K, every byte before "mac "), 44 chars> LF
///
/// Keys are sorted by id. Every number is decimal without leading zeros.
/// Parsing re-encodes and compares, so exactly one spelling is accepted.
enum RegistryFormat {
  static let header = "taskkey assistant-key registry v1"
  static let headerStem = "taskkey assistant-key registry v"
  /// The largest version-1 registry file read: 16 MiB.
  static let maximumFileByteCount = 16 << 20
  /// The most keys a version-1 file holds (the limit of the builds that
  /// wrote it); version 2 holds `RegistryFormatV2.maximumKeyCount`.
  static let maximumKeyCount = 10_000

  struct Contents: Equatable {
    var generation: UInt64
    var entries: [RegistryEntry]
  }

  static func encode(_ contents: Contents, key: SymmetricKey) -> [UInt8] {
    let lines = ["generation \(contents.generation)"] + contents.entries.sorted(by: { $0.id < $1.id }).map(line(for:))
    return AuthenticatedFile.seal(header: header, lines: lines, key: key)
  }

  static func line(for entry: RegistryEntry) -> String {
    let expires = entry.expires.map(String.init) ?? "-"
    let revocation: String
    switch entry.revocation {
    case .none: revocation = "-"
    case .until(let time): revocation = "until:\(time)"
    case .revoked(let time): revocation = "revoked:\(time)"
    }
    let grants = entry.grants.isEmpty ? "-" : entry.grants.joined(separator: ",")
    return
      "key \(entry.id) \(entry.digest.hex) \(entry.created) \(expires) \(revocation) \(entry.trust.rawValue) \(entry.name) \(grants)"
  }

  /// Authenticates, then parses, a registry file.
  static func decode(_ bytes: [UInt8], key: SymmetricKey) throws -> Contents {
    func fail(_ line: Int, _ reason: String) -> AssistantKeyError {
      .registryDamaged(.malformed(line: line, reason: reason))
    }
    let lines = try AuthenticatedFile.open(
      bytes, header: header, headerStem: headerStem, limit: maximumFileByteCount, key: key)
    // Authentic from here on; strict parsing still guards against bugs and
    // against a compromised key writing nonsense.
    let generationPrefix = "generation "
    guard let first = lines.first, first.hasPrefix(generationPrefix),
      let generation = decimal(first.dropFirst(generationPrefix.count)), generation > 0
    else { throw fail(2, "bad or missing generation") }
    var entries = [RegistryEntry]()
    for (offset, line) in lines.dropFirst().enumerated() {
      guard let entry = parseEntry(line) else { throw fail(offset + 3, "bad key line") }
      entries.append(entry)
    }
    guard entries.count <= maximumKeyCount else { throw fail(0, "more than \(maximumKeyCount) keys") }
    guard Set(entries.map(\.id)).count == entries.count, Set(entries.map(\.digest)).count == entries.count else {
      throw fail(0, "duplicate key")
    }
    let contents = Contents(generation: UInt64(generation), entries: entries)
    // Canonical: exactly one spelling (sorted ids, no leading zeros, ...).
    guard encode(contents, key: key) == bytes else { throw fail(0, "not in canonical form") }
    return contents
  }

  static func parseEntry(_ line: Substring) -> RegistryEntry? {
    // Split on the space byte (a Character split is several times slower).
    let fields = line.utf8.split(separator: 0x20, omittingEmptySubsequences: false).map { Substring($0) }
    guard fields.count == 9, fields[0] == "key" else { return nil }
    guard let id = AssistantKeyID(String(fields[1])),
      let digest = SHA256Digest(hex: String(fields[2])),
      AssistantKeyID(digest: digest) == id,
      let created = decimal(fields[3])
    else { return nil }
    var expires: Int64?
    if fields[4] != "-" {
      guard let value = decimal(fields[4]) else { return nil }
      expires = value
    }
    let revocation: RegistryEntry.Revocation
    if fields[5] == "-" {
      revocation = .none
    } else if fields[5].hasPrefix("until:"), let time = decimal(fields[5].dropFirst(6)) {
      revocation = .until(time)
    } else if fields[5].hasPrefix("revoked:"), let time = decimal(fields[5].dropFirst(8)) {
      revocation = .revoked(time)
    } else {
      return nil
    }
    guard let trust = TrustLevel(rawValue: String(fields[6])) else { return nil }
    let name = String(fields[7])
    guard Validation.isValidName(name) else { return nil }
    let grants =
      fields[8] == "-" ? [] : fields[8].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    guard grants.allSatisfy(Validation.isValidGrant), grants.count <= Validation.maximumGrantCount,
      grants == Array(Set(grants)).sorted()
    else { return nil }
    return RegistryEntry(
      id: id, digest: digest, created: created, expires: expires, revocation: revocation, trust: trust, name: name,
      grants: grants)
  }

  /// A non-negative decimal without leading zeros that fits in Int64.
  static func decimal<S: StringProtocol>(_ text: S) -> Int64? {
    let utf8 = text.utf8
    guard let first = utf8.first, utf8.count <= 18, utf8.count == 1 || first != 0x30 else { return nil }
    var value: Int64 = 0
    for byte in utf8 {
      guard (0x30...0x39).contains(byte) else { return nil }
      value = value * 10 + Int64(byte - 0x30)
    }
    return value
  }
}

/// The frame shared by the registry and the last-used file: a header line,
/// body lines, and a final line `mac <base64 of HMAC-SHA256>` over every
/// byte before it. The header differs per file, so one file's MAC cannot
/// pass for the other's.
enum AuthenticatedFile {
  static func seal(header: String, lines: [String], key: SymmetricKey) -> [UInt8] {
    var bytes = Array((([header] + lines).joined(separator: "\n") + "\n").utf8)
    let mac = HMACSHA256.authenticationCode(for: bytes, using: key)
    bytes += Array("mac \(Base64.encode(mac))\n".utf8)
    return bytes
  }

  /// Checks the header, then the MAC, and returns the body lines.
  static func open(
    _ bytes: [UInt8], header: String, headerStem: String, limit: Int, key: SymmetricKey
  ) throws -> [Substring] {
    func fail(_ damage: AssistantKeyError.RegistryDamage) -> AssistantKeyError { .registryDamaged(damage) }
    guard bytes.count <= limit else { throw fail(.tooLarge(byteCount: bytes.count, limit: limit)) }
    // The version comes first: a reader cannot know another version's MAC.
    let firstLineEnd = bytes.firstIndex(of: 0x0a) ?? bytes.count
    let firstLine = String(decoding: bytes[..<firstLineEnd], as: UTF8.self)
    guard firstLine == header else {
      // Another version is "v" and a number without leading zeros.
      let version = firstLine.utf8.dropFirst(headerStem.utf8.count)
      if firstLine.hasPrefix(headerStem), let lead = version.first, lead != UInt8(ascii: "0"), version.count <= 9,
        version.allSatisfy({ (0x30...0x39).contains($0) })
      {
        throw fail(.unsupportedVersion("v" + String(decoding: version, as: UTF8.self)))
      }
      throw fail(.malformed(line: 1, reason: "unexpected header"))
    }
    // The last line is "mac " and 44 characters of base64.
    let macLineLength = 4 + 44 + 1
    let macStart = bytes.count - macLineLength
    guard bytes.last == 0x0a, macStart > firstLineEnd, bytes[macStart - 1] == 0x0a,
      bytes[macStart..<(macStart + 4)].elementsEqual("mac ".utf8),
      let mac = Base64.decode(String(decoding: bytes[(macStart + 4)..<(bytes.count - 1)], as: UTF8.self)),
      mac.count == HMACSHA256.byteCount
    else { throw fail(.malformed(line: 0, reason: "truncated: the last line is not the mac line")) }
    let authenticated = Array(bytes[..<macStart])
    guard HMACSHA256.isValidAuthenticationCode(mac, authenticating: authenticated, using: key) else {
      throw fail(.authenticationFailed)
    }
    // Split on the LF byte: String would treat CR LF as one Character.
    return authenticated[(firstLineEnd + 1)...].split(separator: 0x0a, omittingEmptySubsequences: false).dropLast()
      .map { Substring(String(decoding: $0, as: UTF8.self)) }
  }
}

/// Names, grants and their limits.
enum Validation {
  /// The most grants one key carries.
  static let maximumGrantCount = 16
  static let maximumLength = 64

  static func isValidName(_ name: String) -> Bool {
    let utf8 = Array(name.utf8)
    guard (1...maximumLength).contains(utf8.count), isAlphanumeric(utf8[0]) else { return false }
    return utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == 0x2d }
  }

  static func isValidGrant(_ grant: String) -> Bool {
    let utf8 = Array(grant.utf8)
    guard (1...maximumLength).contains(utf8.count), (0x61...0x7a).contains(utf8[0]) else { return false }
    return utf8.allSatisfy {
      (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_")
        || $0 == UInt8(ascii: ":") || $0 == 0x2d
    }
  }

  private static func isAlphanumeric(_ byte: UInt8) -> Bool {
    (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte)
  }
}
