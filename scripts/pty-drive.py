#!/usr/bin/env python3
"""Runs a command on a fresh pseudo-terminal (its controlling terminal) and
answers its prompts, for the prompt tests in Tests/TaskKeyCLITests.

    pty-drive.py [--interactive] OUT ERR -- COMMAND ARGS...

Standard input is a JSON list of steps, each {"expect": TEXT, "send": TEXT}:
wait until TEXT has appeared on the terminal (10 s at most), then type SEND.
Standard output and standard error of the command go to the files OUT and
ERR, so what reaches the terminal can be told apart from what reaches stdout.
Standard input is /dev/null; with --interactive, standard input and standard
error are the terminal itself (ERR stays empty), as for a person at a shell.
Prints one JSON object: {"status": exit code or -signal, "terminal": what
the terminal showed}.
"""
import json
import os
import pty
import select
import sys
import termios
import time


def main():
    arguments = sys.argv[1:]
    interactive = arguments[:1] == ["--interactive"]
    if interactive:
        arguments = arguments[1:]
    out, err, separator, *command = arguments
    assert separator == "--"
    steps = json.load(sys.stdin)
    pid, master = pty.fork()
    if pid == 0:
        stdout = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        stderr = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(stdout, 1)
        if not interactive:
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(stderr, 2)
        os.execv(command[0], command)
    seen = b""

    def read_some(timeout):
        nonlocal seen
        ready, _, _ = select.select([master], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(master, 4096)
        except OSError:
            return False
        if not chunk:
            return False
        seen += chunk
        return True

    def echo_is_off():
        try:
            return not termios.tcgetattr(master)[3] & termios.ECHO
        except termios.error:
            return False

    for step in steps:
        deadline = time.time() + 10
        while step["expect"].encode() not in seen and time.time() < deadline:
            if not read_some(0.1):
                break
        # Wait until the program has switched echo off after its prompt:
        # it flushes pending input when it does (TCSAFLUSH), so a line typed
        # earlier would be lost. A prompt that never does so gets the line
        # after 5 s, and the test sees the echo.
        deadline = time.time() + 5
        while not echo_is_off() and time.time() < deadline:
            read_some(0.02)
        os.write(master, step["send"].encode())
    # Read until the program ends; give up after 60 s (the program is then
    # killed and reported as killed by SIGKILL).
    deadline = time.time() + 60
    while True:
        open_ = read_some(0.2)
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            while select.select([master], [], [], 0.05)[0] and read_some(0):
                pass
            break
        if not open_:
            _, status = os.waitpid(pid, 0)
            break
        if time.time() > deadline:
            os.kill(pid, 9)
            _, status = os.waitpid(pid, 0)
            break
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
    print(json.dumps({"status": code, "terminal": seen.decode("utf-8", "replace")}))


if __name__ == "__main__":
    main()
