import AssistantKeys
import CommandKit
import FoundationEssentials

/// What `mint`, `rotate`, `verify` and `list` show about a key: never the
/// key itself. `expires` is when the key stops verifying, so an
/// overlapping key shows the end of its overlap when that comes first.
struct KeyDescription {
  let id: String
  let name: String
  let trust: String
  let grants: [String]
  let created: Date?
  let expires: Date?
  let status: String?
  let revoked: Date?
  let overlapUntil: Date?
  let lastUsed: Date?

  /// The JSON fields of a registry record, in help order.
  static let recordFields = [
    "id", "name", "trust", "grants", "created", "expires", "status", "revoked", "overlap_until", "last_used",
  ]
  /// The JSON fields of a verified identity.
  static let identityFields = ["id", "name", "trust", "grants", "expires"]

  init(_ record: AssistantKeyRecord) {
    id = record.id.text
    name = record.name
    trust = record.trust.rawValue
    grants = record.grants
    created = record.created
    status = record.status.word
    if case .revoked(let at) = record.status { revoked = at } else { revoked = nil }
    if case .overlapping(let until) = record.status { overlapUntil = until } else { overlapUntil = nil }
    expires = [record.expires, overlapUntil].compactMap { $0 }.min()
    lastUsed = record.lastUsed
  }

  init(_ identity: AssistantIdentity) {
    id = identity.id.text
    name = identity.name
    trust = identity.trust.rawValue
    grants = identity.grants
    expires = identity.expires
    created = nil
    status = nil
    revoked = nil
    overlapUntil = nil
    lastUsed = nil
  }

  /// The JSON object: every field of the record shape (null when absent),
  /// or the identity shape for a verified key.
  var jsonObject: JSONValue {
    func time(_ date: Date?) -> JSONValue { .optional(date.map(isoTime)) }
    var object: [String: JSONValue] = [
      "id": .string(id), "name": .string(name), "trust": .string(trust), "grants": .strings(grants),
      "expires": time(expires),
    ]
    if let status {
      object["created"] = time(created)
      object["status"] = .string(status)
      object["revoked"] = time(revoked)
      object["overlap_until"] = time(overlapUntil)
      object["last_used"] = time(lastUsed)
    }
    return .object(object)
  }

  /// The JSON text of `jsonObject`, keys sorted.
  func json() -> String { jsonObject.text }
}

/// Writes a freshly minted key: alone on standard output (straight from
/// locked memory, never through a `String`), or first inside one JSON
/// object with `--json`; with `note` on standard error otherwise.
func writeMinted(_ minted: MintedAssistantKey, json: Bool, note: String, _ streams: StandardStreams) throws {
  if json {
    // The record's members and "key" in sorted order (docs/json-output.md),
    // the key written straight from locked memory between them.
    guard case .object(let members) = KeyDescription(minted.record).jsonObject else { return }
    var keyWritten = false
    var first = true
    func member(_ name: String) -> [UInt8] {
      var bytes: [UInt8] = first ? [] : [UInt8(ascii: ",")]
      first = false
      JSONValue.append(string: name, to: &bytes)
      bytes.append(UInt8(ascii: ":"))
      return bytes
    }
    func writeKey() throws {
      try streams.write(member("key") + [UInt8(ascii: "\"")])
      try minted.key.withUnsafeBytes { try streams.writeOutput($0) }
      try streams.write([UInt8(ascii: "\"")])
      keyWritten = true
    }
    try streams.write([UInt8(ascii: "{")])
    for name in members.keys.sorted() {
      if !keyWritten && name > "key" { try writeKey() }
      try streams.write(member(name) + members[name]!.encoded)
    }
    if !keyWritten { try writeKey() }
    try streams.write(Array("}\n".utf8))
  } else {
    try minted.key.withUnsafeBytes { try streams.writeOutput($0) }
    try streams.write([UInt8(ascii: "\n")])
    streams.note(note)
  }
}

/// A one-line summary of a record for standard error.
func summary(_ record: AssistantKeyRecord, _ times: TimeText) -> String {
  let grants = record.grants.isEmpty ? "no grants" : "grants " + record.grants.joined(separator: ",")
  let expires = record.expires.map { "expires \(times.show($0))" } ?? "no expiry"
  return "\(record.id) for assistant '\(record.name)': trust \(record.trust.rawValue), \(grants), \(expires)"
}

/// `--trust LEVEL`, shared by mint.
let trustOption = OptionSpec.value(
  "--trust", "LEVEL", .choice(["restricted", "standard", "elevated"]),
  help: "restricted, standard (default) or elevated.")
