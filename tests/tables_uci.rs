//! Endgame tables through UCI (issue #6): a game that reaches a 4-man ending with no table, the
//! table built in the background during the game and probed by later moves (`tbhits`, mate
//! scores); the search speed while it is built; quitting mid-generation leaves no table; a
//! corrupt table and a missing `NalimovPath` are reported and the engine keeps playing.

use fortress::chess::{legal_moves, parse_uci_move, Position};

fn legal_moves_empty(p: &Position) -> bool {
    legal_moves(p).is_empty()
}
use fortress::egtb::generate::{gentb, GenOptions};
use fortress::egtb::Material;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

struct Engine {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Engine {
    fn start() -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_engine"))
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

    fn send(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(text.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn until(&mut self, prefix: &str, timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let done = line.starts_with(prefix);
                    seen.push(line);
                    if done {
                        return seen;
                    }
                }
                Err(_) => panic!("no '{}' within {:?}; saw {:?}", prefix, timeout, seen),
            }
        }
    }

    fn ready(&mut self) -> Vec<String> {
        self.send("isready");
        self.until("readyok", Duration::from_secs(30))
    }

    fn go(&mut self, position: &str, go: &str) -> (String, Vec<String>) {
        self.send(position);
        self.send(go);
        let lines = self.until("bestmove", Duration::from_secs(60));
        let best = lines
            .last()
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string();
        (best, lines)
    }

    fn quit(mut self) -> std::process::ExitStatus {
        self.send("quit");
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "engine did not quit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn field(line: &str, key: &str) -> Option<u64> {
    let mut it = line.split_whitespace();
    while let Some(w) = it.next() {
        if w == key {
            return it.next()?.parse().ok();
        }
    }
    None
}

fn three_man(dir: &Path) {
    let targets: Vec<Material> = ["KRK", "KNK"]
        .iter()
        .map(|n| Material::parse(n).unwrap())
        .collect();
    let opts = GenOptions {
        dir: dir.to_path_buf(),
        force: false,
        progress: false,
        verify: true,
        full_dtz50: false,
    };
    gentb(&targets, &opts, &mut |_| {}).unwrap();
}

const MIDDLEGAME: &str =
    "position fen r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4";
const KRNK: &str = "8/8/8/8/3k4/8/1K6/R1N5 w - - 0 1";

fn nps(lines: &[String]) -> u64 {
    lines
        .iter()
        .rev()
        .filter(|l| l.starts_with("info depth"))
        .find_map(|l| field(l, "nps"))
        .unwrap_or(0)
}

#[test]
fn table_built_in_background_during_a_game_then_probed() {
    let dir = tempfile::tempdir().unwrap();
    three_man(dir.path());

    // Speed with no generation running.
    let mut e = Engine::start();
    e.send(&format!(
        "setoption name NalimovPath value {}",
        dir.path().display()
    ));
    e.send("setoption name GenerateMissingTables value false");
    e.ready();
    let (_, quiet) = e.go(MIDDLEGAME, "go movetime 2000");
    e.quit();

    let mut e = Engine::start();
    e.send(&format!(
        "setoption name NalimovPath value {}",
        dir.path().display()
    ));
    e.send("setoption name GenerateMaxMen value 4");
    e.ready();
    // The game reaches KRNK with no table: the search asks for it.
    let mut pos = Position::from_fen(KRNK).unwrap();
    let mut moves: Vec<String> = Vec::new();
    let (best, lines) = e.go(&format!("position fen {KRNK}"), "go movetime 300");
    let all: Vec<String> = lines.clone();
    assert!(
        all.iter()
            .any(|l| l.contains("info string generating table KRNK")),
        "{all:?}"
    );
    moves.push(best.clone());
    pos.make_move(parse_uci_move(&pos, &best).unwrap());
    // While it is built: the search speed.
    let (_, busy) = e.go(MIDDLEGAME, "go movetime 2000");
    println!(
        "search speed: {} nps with no generation, {} nps while KRNK is built",
        nps(&quiet),
        nps(&busy)
    );
    // Wait for the worker (the GUI keeps sending isready between moves).
    let start = Instant::now();
    let mut ready = busy.iter().any(|l| l.contains("table KRNK ready"));
    while !ready && start.elapsed() < Duration::from_secs(300) {
        std::thread::sleep(Duration::from_millis(500));
        ready = e.ready().iter().any(|l| l.contains("table KRNK ready"));
    }
    println!(
        "KRNK ready {:.1} s after the first search",
        start.elapsed().as_secs_f64()
    );
    // Later moves of the game probe the new table.
    let mut probed = false;
    for _ in 0..3 {
        if legal_moves_empty(&pos) {
            break;
        }
        let (best, lines) = e.go(
            &format!("position fen {KRNK} moves {}", moves.join(" ")),
            "go movetime 300",
        );
        let last_info = lines.iter().rev().find(|l| l.starts_with("info depth"));
        if let Some(l) = last_info {
            if field(l, "tbhits").unwrap_or(0) > 0 && l.contains("score mate") {
                probed = true;
            }
        }
        pos.make_move(parse_uci_move(&pos, &best).expect("legal bestmove"));
        moves.push(best);
    }
    assert!(ready, "KRNK never finished");
    assert!(probed, "no later move showed tbhits with a mate score");
    assert!(dir.path().join("KRNK.dtm.ftb").is_file());
    e.quit();
}

#[test]
fn quitting_mid_generation_leaves_no_table_and_damage_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    three_man(dir.path());
    let mut e = Engine::start();
    e.send(&format!(
        "setoption name NalimovPath value {}",
        dir.path().display()
    ));
    e.ready();
    let (_, lines) = e.go(
        "position fen 8/8/8/8/3k4/8/1K6/R1B5 w - - 0 1",
        "go movetime 200",
    );
    assert!(
        lines.iter().any(|l| l.contains("generating table KRBK")),
        "{lines:?}"
    );
    e.quit();
    for metric in ["dtm", "dtz", "dtz50"] {
        assert!(!dir.path().join(format!("KRBK.{metric}.ftb")).exists());
    }

    // A corrupt table is reported and not used; the engine still plays a legal move.
    let krk = dir.path().join("KRK.dtz50.ftb");
    let mut bytes = std::fs::read(&krk).unwrap();
    let n = bytes.len();
    bytes[n - 1] ^= 1;
    std::fs::write(&krk, bytes).unwrap();
    let mut e = Engine::start();
    e.send("setoption name GenerateMissingTables value false");
    e.send(&format!(
        "setoption name NalimovPath value {}",
        dir.path().display()
    ));
    let seen = e.ready();
    assert!(
        seen.iter()
            .any(|l| l.starts_with("info string") && l.contains("KRK") && l.contains("checksum")),
        "{seen:?}"
    );
    let fen = "8/8/8/8/8/2k5/8/K6R w - - 0 1";
    let (best, lines) = e.go(&format!("position fen {fen}"), "go depth 8");
    let pos = Position::from_fen(fen).unwrap();
    assert!(parse_uci_move(&pos, &best).is_some(), "{best}");
    assert!(lines
        .iter()
        .all(|l| !l.contains("tbhits") || field(l, "tbhits") == Some(0)));

    // A NalimovPath that does not exist.
    e.send(&format!(
        "setoption name NalimovPath value {}",
        dir.path().join("missing").display()
    ));
    let seen = e.ready();
    assert!(
        seen.iter().any(|l| l.contains("not a directory")),
        "{seen:?}"
    );
    let (best, _) = e.go(&format!("position fen {fen}"), "go depth 6");
    assert!(parse_uci_move(&pos, &best).is_some());
    e.quit();
}
