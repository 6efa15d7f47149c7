import TaskerCore

extension SyncRows {
  /// Every changed row, in the order a capture reads them
  /// (`forEachDirty`), gathered for a test to compare.
  public func everyDirty() throws -> [(kind: String, localID: Int64)] {
    var found: [(kind: String, localID: Int64)] = []
    try forEachDirty { found.append((kind: $0, localID: $1)) }
    return found
  }

  /// Every kept state, by kind and uid (`forEachState`), gathered for a
  /// test to compare.
  public func everyState() throws -> [(kind: String, uid: String, localID: Int64?, state: [UInt8])] {
    var found: [(kind: String, uid: String, localID: Int64?, state: [UInt8])] = []
    try forEachState { found.append($0) }
    return found
  }
}
