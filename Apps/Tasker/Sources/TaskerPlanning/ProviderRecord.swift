import CommandKit
import TaskerHTTP

/// One planning provider as the user set it up: where requests go, the
/// model, which device-only vault item holds the key, and whether sending
/// to it was confirmed. Kept as the vault item `tasker/provider/NAME`
/// (docs/formats/provider-record.md), never in the database: where the
/// user's tasks may go is not something a database row can say.
public struct ProviderRecord: Sendable, Equatable {
  /// The provider's name: 1 to 32 of `a-z 0-9 -`, starting with a letter
  /// or digit.
  public let name: String
  /// The OpenAI-compatible base URL; requests go to `/chat/completions`
  /// under it.
  public let endpoint: HTTPEndpoint
  /// The model named in each request.
  public let model: String
  /// The vault item whose value is the bearer key, or nil for none.
  public let keyItem: String?
  /// Whether requests ask for the plan's JSON schema (`response_format`).
  public let requestsSchema: Bool
  /// When sending to this provider was confirmed, seconds since 1970, or
  /// nil when it was not (or need not be).
  public let confirmedAt: Int64?

  /// The format version this build writes and reads.
  public static let version: Int64 = 1
  /// The prefix of the vault items that hold provider records.
  public static let itemPrefix = "tasker/provider/"
  /// The latest `confirmed_at` accepted: 9999-12-31T23:59:59Z.
  static let latestTime: Int64 = 253_402_300_799

  /// A record, checked by the rules of the format.
  ///
  /// - Throws: `PlanningError.invalidProviderName`, `.invalidModel`,
  ///   `.invalidKeyItem`, `.publicProviderNeedsKey`,
  ///   `.exchange(.plainHTTPRefused)`.
  public init(
    name: String, endpoint: HTTPEndpoint, model: String, keyItem: String?, requestsSchema: Bool,
    confirmedAt: Int64? = nil
  ) throws(PlanningError) {
    guard Self.isName(name) else { throw .invalidProviderName(name) }
    guard Self.isModel(model) else { throw .invalidModel }
    if let keyItem, !Self.isKeyItem(keyItem) { throw .invalidKeyItem(name: keyItem) }
    if endpoint.scheme == "http", endpoint.scope == .publicNetwork {
      throw .exchange(.plainHTTPRefused(host: endpoint.host))
    }
    if endpoint.scope == .publicNetwork, keyItem == nil { throw .publicProviderNeedsKey(host: endpoint.host) }
    if let confirmedAt, !(0...Self.latestTime).contains(confirmedAt) {
      throw .recordMalformed(name: name, reason: "confirmed_at is out of range")
    }
    self.name = name
    self.endpoint = endpoint
    self.model = model
    self.keyItem = keyItem
    self.requestsSchema = requestsSchema
    self.confirmedAt = confirmedAt
  }

  /// The vault item that holds this record.
  public var itemName: String { Self.itemPrefix + name }

  /// Whether the first request needs the user's confirmation: the host is
  /// on the public network and sending was not confirmed yet.
  public var needsConfirmation: Bool { endpoint.scope == .publicNetwork && confirmedAt == nil }

  /// This record confirmed at `time`.
  public func confirmed(at time: Int64) -> ProviderRecord {
    // Every field was checked when this record was made; only the time is new.
    (try? ProviderRecord(
      name: name, endpoint: endpoint, model: model, keyItem: keyItem, requestsSchema: requestsSchema,
      confirmedAt: min(max(0, time), Self.latestTime))) ?? self
  }

  /// The record's canonical JSON, as stored in the vault.
  public var encoded: [UInt8] {
    JSONValue.object([
      "version": .integer(Self.version), "name": .string(name), "url": .string(endpoint.text),
      "model": .string(model), "key_item": .optional(keyItem), "response_format": .bool(requestsSchema),
      "confirmed_at": confirmedAt.map(JSONValue.integer) ?? .null,
    ]).encoded
  }

  /// Reads the record stored as the vault item `itemName`, by the rules of
  /// docs/formats/provider-record.md in their order, the last that the
  /// bytes are the record's canonical encoding.
  ///
  /// - Throws: `PlanningError.recordMalformed` naming the rule,
  ///   `.recordUnsupportedVersion`.
  public init(itemName: String, bytes: [UInt8]) throws(PlanningError) {
    let name = itemName.hasPrefix(Self.itemPrefix) ? String(itemName.dropFirst(Self.itemPrefix.count)) : itemName
    func malformed(_ reason: String) -> PlanningError { .recordMalformed(name: name, reason: reason) }
    let document: JSONDocument
    do { document = try JSONDocument(parsing: bytes) } catch { throw malformed("not strict JSON") }
    guard case .object(let members) = document.value else { throw malformed("not a JSON object") }
    guard case .integer(let version)? = members["version"] else { throw malformed("no integer version") }
    guard version == Self.version else { throw .recordUnsupportedVersion(name: name, version: version) }
    guard Set(members.keys) == Self.members else { throw malformed("the members are not exactly \(Self.memberList)") }
    guard case .string(let storedName)? = members["name"], Self.isName(storedName), storedName == name,
      itemName == Self.itemPrefix + storedName
    else { throw malformed("the name is not the item's") }
    guard case .string(let url)? = members["url"], let endpoint = try? HTTPEndpoint(parsing: url),
      endpoint.text == url
    else { throw malformed("the url is not a canonical http or https URL") }
    guard case .string(let model)? = members["model"] else { throw malformed("the model is not a string") }
    let keyItem: String?
    switch members["key_item"] {
    case .null?: keyItem = nil
    case .string(let item)?: keyItem = item
    default: throw malformed("key_item is not a string or null")
    }
    guard case .bool(let requestsSchema)? = members["response_format"] else {
      throw malformed("response_format is not a boolean")
    }
    let confirmedAt: Int64?
    switch members["confirmed_at"] {
    case .null?: confirmedAt = nil
    case .integer(let time)? where (0...Self.latestTime).contains(time): confirmedAt = time
    default: throw malformed("confirmed_at is not null or an integer from 0 to 253402300799")
    }
    do {
      try self.init(
        name: storedName, endpoint: endpoint, model: model, keyItem: keyItem, requestsSchema: requestsSchema,
        confirmedAt: confirmedAt)
    } catch {
      throw malformed(Self.rule(broken: error))
    }
    // One record has one spelling: the canonical encoding a writer writes.
    guard encoded == bytes else { throw malformed("not the canonical encoding") }
  }

  static let members: Set<String> = ["confirmed_at", "key_item", "model", "name", "response_format", "url", "version"]
  static let memberList = members.sorted().joined(separator: ", ")

  static func rule(broken error: PlanningError) -> String {
    switch error {
    case .invalidModel: return "the model is not 1 to 128 visible ASCII characters"
    case .invalidKeyItem: return "key_item is not a vault item name outside tasker/"
    case .publicProviderNeedsKey: return "a public-network url without key_item"
    case .exchange: return "plain http to a public-network host"
    default: return "a field is out of range"
    }
  }

  /// `^[a-z0-9][a-z0-9-]{0,31}$`.
  public static func isName(_ text: String) -> Bool {
    let bytes = Array(text.utf8)
    guard (1...32).contains(bytes.count), bytes[0] != UInt8(ascii: "-") else { return false }
    return bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "-") }
  }

  /// 1 to 128 bytes, each 0x21 to 0x7E.
  static func isModel(_ text: String) -> Bool {
    let bytes = Array(text.utf8)
    return (1...128).contains(bytes.count) && bytes.allSatisfy { (0x21...0x7E).contains($0) }
  }

  /// A vault item name (1 to 128 of `A-Z a-z 0-9 . _ - : @ /`) outside
  /// Tasker's own `tasker/` items.
  static func isKeyItem(_ text: String) -> Bool {
    let bytes = Array(text.utf8)
    let allowed = Set(".-_:@/".utf8)
    return (1...128).contains(bytes.count) && !text.hasPrefix("tasker/")
      && bytes.allSatisfy {
        (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || allowed.contains($0)
      }
  }
}
