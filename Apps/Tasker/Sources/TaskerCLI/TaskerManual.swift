import CommandKit

/// The text of tasker(1) around what CommandKit prints from the command
/// declarations.
enum TaskerManual {
  static let text = ManualText(
    title: "tasks and pages with sealed notes, and the assistant gate", manual: "Tasker Manual",
    description: [
      "Tasker keeps tasks and pages in an SQLite database in TASKER_HOME. Note text and page bodies are sealed "
        + "with AES-256-GCM under the note keys of the TaskKey vault before they are written; titles and other "
        + "fields are stored plain. 'tasker mcp' is the assistant gate: MCP over stdio or HTTP, every call decided, "
        + "budgeted and receipted.",
      "Errors go to standard error as \"tasker: error: ...\" with a \"hint:\" line; nothing is written to standard "
        + "output on failure. Text a user or an assistant wrote is printed with control characters made visible. "
        + "With --json, commands print one JSON object (docs/json-output.md: snake_case keys, ids as strings, "
        + "RFC 3339 UTC times, explicit nulls); otherwise times are local.",
    ],
    sections: """
      .SH ENVIRONMENT
      .TP
      .B TASKER_HOME
      Tasker's directory: tasker.db and attachments/. When unset,
      $XDG_DATA_HOME/tasker, else ~/.local/share/tasker.
      .TP
      .B TASKKEY_HOME
      The TaskKey vault that holds the note keys (default ~/.local/share/tasker/keys).
      .TP
      .B TASKER_ASSISTANT_KEY
      For 'tasker mcp' over stdio: run as the assistant this key belongs to.
      .TP
      .B TASKER_ASSISTANT_KEY_FILE
      For 'tasker mcp' over stdio: the same, with the key read from this file, which must be
      a regular file you own with mode 0600; refused when TASKER_ASSISTANT_KEY is set too.
      .TP
      .B VISUAL, EDITOR
      The editor of \\-\\-notes\\-in\\-editor and \\-\\-body\\-in\\-editor.
      .TP
      .B TZ
      The time zone of times shown and of "today" for due dates; JSON times are UTC.
      .PP
      No variable holds note text: bodies come from standard input, a file or the editor.
      .SH FILES
      .TP
      .I $TASKER_HOME/tasker.db
      The database (SQLite, WAL), mode 0600 in a 0700 directory; refused when looser.
      .TP
      .I $TASKER_HOME/attachments/
      Attachment files, named by their id, sealed when attachment encryption is on.
      .SH SEE ALSO
      .BR taskkey (1),
      .BR sqlite3 (1)
      """)
}
