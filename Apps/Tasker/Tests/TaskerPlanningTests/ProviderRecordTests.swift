import CommandKit
import TaskerHTTP
import Testing

@testable import TaskerPlanning

@Suite("Provider records: written canonical, read by every rule")
struct ProviderRecordTests {
  static func record(_ url: String, key: String? = "provider/x") throws -> ProviderRecord {
    try ProviderRecord(
      name: "cloud", endpoint: try HTTPEndpoint(parsing: url), model: "gpt-4o-mini", keyItem: key, requestsSchema: true)
  }

  @Test func aRecordRoundTripsThroughItsBytes() throws {
    let record = try Self.record("https://API.example.com:443/v1").confirmed(at: 1_764_633_600)
    let text = String(decoding: record.encoded, as: UTF8.self)
    #expect(
      text == #"{"confirmed_at":1764633600,"key_item":"provider/x","model":"gpt-4o-mini","name":"cloud","#
        + #""response_format":true,"url":"https://api.example.com/v1","version":1}"#)
    #expect(try ProviderRecord(itemName: "tasker/provider/cloud", bytes: record.encoded) == record)
  }

  @Test func whatARecordMayNotSay() throws {
    #expect(throws: PlanningError.publicProviderNeedsKey(host: "api.example.com")) {
      try Self.record("https://api.example.com/v1", key: nil)
    }
    #expect(throws: PlanningError.exchange(.plainHTTPRefused(host: "api.example.com"))) {
      try Self.record("http://api.example.com/v1")
    }
    #expect(throws: PlanningError.invalidKeyItem(name: "tasker/provider/other")) {
      try Self.record("https://api.example.com/v1", key: "tasker/provider/other")
    }
    #expect(throws: PlanningError.invalidProviderName("-x")) {
      try ProviderRecord(
        name: "-x", endpoint: try HTTPEndpoint(parsing: "http://127.0.0.1/v1"), model: "m", keyItem: nil,
        requestsSchema: true)
    }
    #expect(throws: PlanningError.invalidModel) {
      try ProviderRecord(
        name: "x", endpoint: try HTTPEndpoint(parsing: "http://127.0.0.1/v1"), model: "a b", keyItem: nil,
        requestsSchema: true)
    }
    // Local providers need no key and no confirmation.
    let local = try ProviderRecord(
      name: "local", endpoint: try HTTPEndpoint(parsing: "http://192.168.1.20:8080/v1"), model: "m", keyItem: nil,
      requestsSchema: false)
    #expect(!local.needsConfirmation)
    #expect(try Self.record("https://api.example.com/v1").needsConfirmation)
  }

  static let refused: [(String, String, String)] = [
    ("tasker/provider/a", "{", "not JSON"),
    ("tasker/provider/a", "[]", "not an object"),
    ("tasker/provider/a", #"{"version":"1"}"#, "a version that is not an integer"),
    ("tasker/provider/a", #"{"version":1.0}"#, "a version spelled as a fraction"),
    (
      "tasker/provider/a",
      #"{"confirmed_at":null,"key_item":null,"model":"m","name":"a","response_format":true,"url":"http://127.0.0.1/v1","version":1,"extra":1}"#,
      "an extra member"
    ),
    (
      "tasker/provider/b",
      #"{"confirmed_at":null,"key_item":null,"model":"m","name":"a","response_format":true,"url":"http://127.0.0.1/v1","version":1}"#,
      "a name that is not the item's"
    ),
    (
      "tasker/provider/a",
      #"{"confirmed_at":null,"key_item":null,"model":"m","name":"a","response_format":true,"url":"http://127.0.0.1:80/v1","version":1}"#,
      "a URL that is not canonical"
    ),
    (
      "tasker/provider/a",
      #"{"confirmed_at":null,"key_item":"k","model":"m","name":"a","response_format":true,"url":"http://8.8.8.8/v1","version":1}"#,
      "plain http to a public address"
    ),
    (
      "tasker/provider/a",
      #"{"confirmed_at":-1,"key_item":null,"model":"m","name":"a","response_format":true,"url":"http://127.0.0.1/v1","version":1}"#,
      "a time before 1970"
    ),
    (
      "tasker/provider/a",
      #"{"confirmed_at":null,"key_item":null,"model":"m","name":"a","response_format":1,"url":"http://127.0.0.1/v1","version":1}"#,
      "response_format not a boolean"
    ),
  ]

  @Test(arguments: refused.indices)
  func aBrokenRecordIsRefused(_ index: Int) {
    let (item, text, name) = Self.refused[index]
    #expect(throws: PlanningError.self, "\(name)") { try ProviderRecord(itemName: item, bytes: Array(text.utf8)) }
  }

  @Test func anotherVersionIsNamed() {
    #expect(throws: PlanningError.recordUnsupportedVersion(name: "a", version: 2)) {
      try ProviderRecord(itemName: "tasker/provider/a", bytes: Array(#"{"version":2}"#.utf8))
    }
  }
}
