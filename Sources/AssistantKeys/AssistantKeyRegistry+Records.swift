import FoundationEssentials
import TaskCrypto

/// Checks and conversions behind mint, rotate and list.
extension AssistantKeyRegistry {
  static func append(_ entry: RegistryEntry, to contents: inout RegistryFormat.Contents) throws {
    guard contents.entries.count < maximumKeyCount else {
      throw AssistantKeyError.registryFull(limit: maximumKeyCount)
    }
    // 2^-64 per pair; refuse rather than alias two keys.
    guard !contents.entries.contains(where: { $0.id == entry.id || $0.digest == entry.digest }) else {
      throw AssistantKeyError.idCollision
    }
    contents.entries.append(entry)
  }

  static func validated(name: String, grants: [String]) throws -> [String] {
    guard Validation.isValidName(name) else { throw AssistantKeyError.invalidName(name) }
    if let bad = grants.first(where: { !Validation.isValidGrant($0) }) { throw AssistantKeyError.invalidGrant(bad) }
    let unique = Array(Set(grants)).sorted()
    guard unique.count <= maximumGrantCount else {
      throw AssistantKeyError.tooManyGrants(count: unique.count, limit: maximumGrantCount)
    }
    return unique
  }

  static func seconds(_ duration: Duration, limit: Int64) throws -> Int64 {
    let seconds = duration.components.seconds
    guard seconds > 0, seconds <= limit else { throw AssistantKeyError.invalidDuration(seconds: seconds, limit: limit) }
    return seconds
  }

  func seconds(_ date: Date) -> Int64 {
    Int64(date.timeIntervalSince1970.rounded(.down))
  }

  func record(of entry: RegistryEntry, at now: Int64, lastUsed: Int64?) -> AssistantKeyRecord {
    func date(_ time: Int64) -> Date { Date(timeIntervalSince1970: TimeInterval(time)) }
    let status: AssistantKeyStatus
    switch entry.revocation {
    case .revoked(let time):
      status = .revoked(at: date(time))
    case .until(let time) where now >= time:
      status = .revoked(at: date(time))
    case .none, .until:
      if let expires = entry.expires, now >= expires {
        status = .expired(at: date(expires))
      } else if case .until(let time) = entry.revocation {
        status = .overlapping(until: date(time))
      } else {
        status = .active
      }
    }
    return AssistantKeyRecord(
      id: entry.id, name: entry.name, trust: entry.trust, grants: entry.grants, created: date(entry.created),
      expires: entry.expires.map(date), status: status, lastUsed: lastUsed.map(date))
  }
}
