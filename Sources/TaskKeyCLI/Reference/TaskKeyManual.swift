import CommandKit

/// The text of taskkey(1) around what CommandKit prints from the command
/// declarations.
enum TaskKeyManual {
  static let text = ManualText(
    title: "seal Tasker's notes and manage its keys", manual: "TaskKey Manual",
    description: [
      "TaskKey seals note text with AES-256-GCM in the tc1 sealed-value format, keeps its keys in a "
        + "passphrase-guarded vault that is readable after the first unlock until reboot or 'taskkey lock', "
        + "mints and verifies assistant keys, and checks its published test vectors.",
      "Errors go to standard error as \"taskkey: error: ...\" with a \"hint:\" line; nothing is written to "
        + "standard output on failure. With --json, reporting commands print one JSON object "
        + "(docs/json-output.md: snake_case keys, RFC 3339 UTC times, explicit nulls); otherwise times are "
        + "local on a terminal.",
    ],
    sections: environment + "\n" + files)

  static let environment = """
    .SH ENVIRONMENT
    .TP
    .B TASKKEY_HOME
    The vault directory. When unset, $XDG_DATA_HOME/tasker/keys is used.
    .TP
    .B XDG_DATA_HOME
    When TASKKEY_HOME is unset and this is an absolute path, the vault is
    $XDG_DATA_HOME/tasker/keys; otherwise ~/.local/share/tasker/keys.
    .TP
    .B HOME
    Used for ~/.local/share/tasker/keys when neither of the above is set.
    .TP
    .B XDG_RUNTIME_DIR
    When it is an absolute path to a private tmpfs directory, the unlock session
    keys live in $XDG_RUNTIME_DIR/taskkey (see FILES).
    .TP
    .B TZ
    The time zone of times shown on a terminal. JSON output is always UTC.
    .PP
    No variable holds a passphrase or a key: passphrases come from the terminal,
    a 0600 file (\\-\\-passphrase\\-file) or a descriptor (\\-\\-passphrase\\-fd).
    """

  static let files = """
    .SH FILES
    .TP
    .I $TASKKEY_HOME/vault.tkv
    The vault: the synchronisable store (note keys, items) sealed under a key
    wrapped by the passphrase. vault.tkv.prev is the previous generation;
    vault.lock is the lock file. Directory 0700, files 0600.
    .TP
    .I $TASKKEY_HOME/device\\-only/
    The device\\-only store (device.tkv), the unlock session (unlock.session)
    and the assistant\\-key registry and last\\-used file. It carries
    CACHEDIR.TAG, .nobackup and the user.xdg.robots.backup=false attribute, so
    tar \\-\\-exclude\\-caches, restic \\-\\-exclude\\-caches, borg \\-\\-exclude\\-caches and
    tools that honour .nobackup leave it out. The next taskkey command that
    opens the vault puts missing markers back.
    .TP
    .I $XDG_RUNTIME_DIR/taskkey/, /run/user/UID/taskkey/ or /dev/shm/taskkey\\-UID/
    The unlock session keys, in the first of these that is a private tmpfs
    directory: in memory, gone at reboot or 'taskkey lock'.
    .TP
    Key files
    One line "<8 hex kid>:<64 hex key>", mode 0600, made by taskkey keygen.
    .PP
    Backups: back up the vault directory with your usual tool and its cache
    exclusion (restic backup \\-\\-exclude\\-caches), or write TaskKey's own file
    with 'taskkey backup create \\-o F'. After restoring, run 'taskkey doctor';
    device\\-only items and assistant keys are never in a backup, so mint new
    assistant keys.
    .SH SEE ALSO
    .BR restic (1),
    .BR borg (1),
    .BR tar (1),
    .BR bash (1)
    .PP
    \\fBtaskkey \\-\\-help\\fR and \\fBtaskkey \\fIcommand\\fB \\-\\-help\\fR print the same text
    as this page, one command at a time.
    """
}
