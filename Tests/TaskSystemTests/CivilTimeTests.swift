import Foundation
import Testing

@testable import TaskSystem

/// `CivilTime.localNow()`: the wall clock in the local time zone, the
/// "today" that relative due dates count from.
@Suite("TaskSystem civil time")
struct CivilTimeTests {
  @Test func localNowIsTheRealTimeClockInTheLocalZone() {
    // Bracketed by two readings of Foundation's clock: localNow falls between them, in the same zone.
    let before = Date().timeIntervalSince1970.rounded(.down)
    let now = CivilTime.localNow()
    let after = Date().timeIntervalSince1970.rounded(.down)
    let candidates = stride(from: before, through: after, by: 1).map { CivilTime.local($0) }
    #expect(candidates.contains(now), "\(now) is not between \(before) and \(after)")
    #expect(now.utcOffsetSeconds == CivilTime.local(before).utcOffsetSeconds)
    #expect(now.year >= 2026)
  }

  @Test func localAndUTCAgreeOnTheInstantThroughTheOffset() {
    let seconds = 1_796_149_173.0
    let local = CivilTime.local(seconds)
    let shifted = CivilTime.utc(seconds + Double(local.utcOffsetSeconds))
    let fields: [Int] = [shifted.year, shifted.month, shifted.day, shifted.hour, shifted.minute]
    let expected: [Int] = [local.year, local.month, local.day, local.hour, local.minute]
    #expect(fields == expected)
  }
}
