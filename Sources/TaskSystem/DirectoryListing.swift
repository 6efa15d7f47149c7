import Glibc

/// The names in a directory, read with `opendir`/`readdir`.
public enum DirectoryListing {
  /// The names in `directory`, without `.` and `..`, in no set order;
  /// nil when nothing is there.
  ///
  /// - Throws: `SystemError.failed` with the call `opendir` when the path
  ///   exists but cannot be listed (not a directory, no permission).
  public static func names(of directory: String) throws -> [String]? {
    guard let handle = opendir(directory) else {
      if errno == ENOENT { return nil }
      throw SystemError.failed(call: "opendir", path: directory, errno: errno)
    }
    defer { closedir(handle) }
    var names = [String]()
    while let entry = readdir(handle) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }
}
