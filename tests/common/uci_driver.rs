//! The UCI driver shared by `tests/uci.rs` and `tests/tables_uci.rs`: the real binary on pipes,
//! driven as a GUI drives it. A reader thread turns its output into lines, so a test can wait
//! for a line with a deadline instead of blocking forever on an engine that never answers.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

pub struct Engine {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Engine {
    /// The engine with `NalimovPath` set to `dir`.
    pub fn with_tables(dir: &std::path::Path) -> Engine {
        let mut e = Engine::start();
        e.send(&format!(
            "setoption name NalimovPath value {}",
            dir.display()
        ));
        e
    }

    pub fn start() -> Engine {
        Engine::spawn(Command::new(env!("CARGO_BIN_EXE_engine")))
    }

    /// The engine run by `command` (the binary itself, or a shell that sets limits and execs
    /// it), with its input and output on pipes.
    pub fn spawn(mut command: Command) -> Engine {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("engine starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Engine {
            child,
            stdin,
            lines: rx,
        }
    }

    pub fn send(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(text.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The lines printed within `span`, up to and including the first that starts with
    /// `prefix`, and whether that one came.
    fn read(&mut self, span: Duration, prefix: &str) -> (Vec<String>, bool) {
        let deadline = Instant::now() + span;
        let mut seen = Vec::new();
        while let Ok(line) = self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            let done = line.starts_with(prefix);
            seen.push(line);
            if done {
                return (seen, true);
            }
        }
        (seen, false)
    }

    /// Reads lines until one starts with `prefix`; returns all lines read, that one last.
    pub fn until(&mut self, prefix: &str, timeout: Duration) -> Vec<String> {
        let (seen, found) = self.read(timeout, prefix);
        assert!(found, "no '{prefix}' within {timeout:?}; saw {seen:?}");
        seen
    }

    /// Every line the engine prints during `span`, checked to hold no `bestmove`: for a search
    /// that must wait for `stop` or `ponderhit`.
    pub fn no_bestmove_for(&mut self, span: Duration) -> Vec<String> {
        let (seen, early) = self.read(span, "bestmove");
        assert!(!early, "bestmove too early: {seen:?}");
        seen
    }

    /// `isready` and the lines up to `readyok`. The generous timeout covers a loaded machine and
    /// the table rescan `isready` triggers.
    pub fn ready(&mut self) -> Vec<String> {
        self.send("isready");
        self.until("readyok", Duration::from_secs(30))
    }

    /// Waits for `bestmove`; returns its move and all lines up to it.
    pub fn bestmove(&mut self, timeout: Duration) -> (String, Vec<String>) {
        let lines = self.until("bestmove", timeout);
        let best = lines
            .last()
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string();
        (best, lines)
    }

    /// Sends a `position` line and a `go` line and waits (up to a minute) for the bestmove.
    pub fn go(&mut self, position: &str, go: &str) -> (String, Vec<String>) {
        self.send(position);
        self.send(go);
        self.bestmove(Duration::from_secs(60))
    }

    /// Closes the engine's input and waits for it to exit.
    pub fn close(mut self) -> ExitStatus {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "engine did not exit at end of input"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// `quit`, then the end of input.
    pub fn quit(mut self) -> ExitStatus {
        self.send("quit");
        self.close()
    }
}

/// The number after `key` in an `info` line (`field(line, "tbhits")`).
pub fn field(line: &str, key: &str) -> Option<u64> {
    let mut it = line.split_whitespace();
    while let Some(w) = it.next() {
        if w == key {
            return it.next()?.parse().ok();
        }
    }
    None
}
