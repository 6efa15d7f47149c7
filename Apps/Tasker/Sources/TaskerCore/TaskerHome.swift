import FoundationEssentials

/// Where Tasker keeps its files: one private directory holding the
/// database `tasker.db` and the `attachments/` folder beside it.
public struct TaskerHome: Sendable, Equatable {
  /// The directory.
  public let directory: String

  /// A home at `directory`.
  public init(directory: String) {
    self.directory = directory
  }

  /// The default home: `TASKER_HOME`, else `$XDG_DATA_HOME/tasker` (when
  /// absolute), else `~/.local/share/tasker` — the same parent TaskKey's
  /// vault uses by default (`…/tasker/keys`).
  ///
  /// - Returns: nil when not even `HOME` is set.
  public init?(environment: [String: String]) {
    if let home = environment["TASKER_HOME"], !home.isEmpty {
      directory = home
    } else if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
      directory = data + "/tasker"
    } else if let home = environment["HOME"], !home.isEmpty {
      directory = home + "/.local/share/tasker"
    } else {
      return nil
    }
  }

  /// The SQLite database.
  public var databasePath: String { directory + "/tasker.db" }

  /// The folder of attachment files.
  public var attachmentsDirectory: String { directory + "/attachments" }

  /// Makes the directory (mode 0700) when missing, and checks that it is
  /// private to the user.
  ///
  /// - Throws: `TaskerError.system`.
  func prepare(_ files: TaskerFiles) throws {
    try files.prepareDirectory(directory)
  }
}
