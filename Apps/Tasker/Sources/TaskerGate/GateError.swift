import AssistantKeys
import TaskerCore

/// Every way the assistant gate can fail. Messages say what happened and
/// what to do; none carries a key.
public enum GateError: Error, Equatable, Sendable, CustomStringConvertible {
  /// Quiet hours are not `HH:MM-HH:MM` with two different valid times.
  case invalidQuietHours(String)
  /// A quiet-hours zone is a POSIX TZ rule string, which the gate does not
  /// read; an IANA name is needed.
  case posixTimeZoneRule(String)
  /// A quiet-hours zone is not an IANA name /usr/share/zoneinfo holds.
  case unknownTimeZone(String)
  /// A daily budget (of actions or of reads) is not a whole number from 0
  /// to the limit.
  case invalidBudget(String, GateBudgetKind)
  /// The HTTP listen address is not `[IPv4:]PORT`.
  case invalidListenAddress(String)
  /// A name given to `--allow-host` is not a DNS name or IPv4 address.
  case invalidAllowedHost(String)
  /// The HTTP server could not start (the port is taken or not allowed).
  case httpStartFailed(address: String)
  /// libmicrohttpd, loaded when an HTTP server starts, could not be loaded.
  case httpLibraryUnavailable(reason: String)
  /// The assistant key in the environment was refused.
  case keyRefused(AssistantKeyError)
  /// Both `TASKER_ASSISTANT_KEY` and `TASKER_ASSISTANT_KEY_FILE` are set.
  case keySourcesConflict
  /// The file `TASKER_ASSISTANT_KEY_FILE` names cannot serve as a key file;
  /// `reason` says why (never what it holds).
  case keyFileRefused(path: String, reason: String)
  /// Nothing exists at the path `TASKER_ASSISTANT_KEY_FILE` names.
  case keyFileMissing(path: String)
  /// No approval with this number.
  case approvalNotFound(Int64)
  /// The approval was already approved or denied.
  case approvalNotPending(Int64)
  /// The approval's stored call no longer parses (the database was edited).
  case approvalUnreadable(Int64)
  /// The key that asked was revoked, expired or is unknown now, so its
  /// call is not run; deny it.
  case keyNoLongerValid(keyID: String, status: String)
  /// No receipt with this number.
  case receiptNotFound(Int64)
  /// The receipt records something that cannot be undone; `reason` says
  /// why (no undo, or the copy its undo needs was purged).
  case notUndoable(Int64, reason: String)
  /// The receipt was already undone, by receipt `by`.
  case alreadyUndone(Int64, by: Int64)
  /// The store failed.
  case store(TaskerError)
  /// An approved call ran and the store refused it: nothing changed, the
  /// approval is decided, and receipt `receipt` (decision `failed`) says so.
  case approvedCallFailed(Int64, receipt: Int64, TaskerError)
  /// A receipt object breaks a rule of its format; the reason names it.
  case receiptMalformed(String)
  /// A receipt object names a format version this build does not read.
  case receiptUnsupportedVersion(Int64)

  /// The message for people (as `message`).
  public var description: String { message }

  /// The message for people.
  public var message: String {
    switch self {
    case .invalidQuietHours(let text):
      return "invalid quiet hours '\(text.prefix(32))': use HH:MM-HH:MM with two different times, e.g. 22:00-07:00"
    case .posixTimeZoneRule(let text):
      return "the time zone '\(text.prefix(64))' is a POSIX TZ rule string, which quiet hours do not read: give an "
        + "IANA zone name such as Europe/Berlin (the files under /usr/share/zoneinfo)"
    case .unknownTimeZone(let text):
      return "unknown time zone '\(text.prefix(64))': give an IANA zone name such as Europe/Berlin or UTC (the "
        + "files under /usr/share/zoneinfo)"
    case .invalidBudget(let text, let kind):
      return "invalid \(kind == .reads ? "read budget" : "budget") '\(text.prefix(32))': use a whole number of "
        + "\(kind.rawValue) per day from 0 to \(kind.maximum)"
    case .invalidListenAddress(let text):
      return "invalid listen address '\(text.prefix(64))': use PORT or IPv4:PORT, e.g. 8765 or 127.0.0.1:8765"
    case .invalidAllowedHost(let text):
      return "invalid allowed host '\(text.prefix(64))': use a DNS name or IPv4 address without a port, e.g. tasker.lan"
    case .httpStartFailed(let address):
      return "could not listen on \(address): the port may be in use or not allowed"
    case .httpLibraryUnavailable(let reason):
      return "cannot serve HTTP: libmicrohttpd did not load (\(reason.prefix(200))); install Debian's libmicrohttpd12"
    case .keyRefused(let error):
      return "assistant key refused: \(error)"
    case .keySourcesConflict:
      return "both TASKER_ASSISTANT_KEY and TASKER_ASSISTANT_KEY_FILE are set: unset TASKER_ASSISTANT_KEY and keep "
        + "the key in the file (or unset TASKER_ASSISTANT_KEY_FILE)"
    case .keyFileRefused(let path, let reason):
      return "assistant key file '\(path)' (TASKER_ASSISTANT_KEY_FILE) refused: \(reason)"
    case .keyFileMissing(let path):
      return "assistant key file '\(path)' (TASKER_ASSISTANT_KEY_FILE) does not exist: write the key there "
        + "('taskkey mint' prints it) with mode 0600, or unset the variable"
    case .approvalNotFound(let id): return "no approval #\(id); 'tasker approvals list' shows them"
    case .approvalNotPending(let id): return "approval #\(id) was already approved or denied"
    case .approvalUnreadable(let id): return "approval #\(id) holds a call that no longer parses; deny it"
    case .keyNoLongerValid(let keyID, let status):
      return "the key \(keyID) that asked is \(status) now, so its call is not run; deny it"
    case .receiptNotFound(let id): return "no receipt r\(id); 'tasker receipts' lists them"
    case .notUndoable(let id, let reason): return "receipt r\(id) cannot be undone: \(reason)"
    case .alreadyUndone(let id, let by): return "receipt r\(id) was already undone by r\(by)"
    case .store(let error): return error.description
    case .approvedCallFailed(let id, let receipt, let error):
      return "approval #\(id) ran and failed, nothing was changed (receipt r\(receipt)): \(error.description)"
    case .receiptMalformed(let reason): return "malformed receipt: \(reason)"
    case .receiptUnsupportedVersion(let version): return "receipt format version \(version) is not supported; 1 is"
    }
  }
}
