//! The UCI session: reads the GUI's lines, keeps the game position and the options, runs the
//! search on its own thread and prints what it reports. The input loop never waits for the
//! search, so `isready`, `stop` and `ponderhit` are answered while it thinks.

use super::protocol::{self, Command, GoParams, Info, OptionKind, Parsed};
use crate::chess::{parse_uci_move, Position};
use crate::egtb::background::Background;
use crate::egtb::play::probe::{default_dir, split_path, Tablebases};
use crate::egtb::play::syzygy::{self, Syzygy};
use crate::eval::network::Network;
use crate::memory::{self, OutOfMemory};
use crate::search::{self, Control, Engine, Limits, Report, SyzygyUse, THREAD_MEMORY_BYTES};
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

const NAME: &str = concat!("Fortress ", env!("CARGO_PKG_VERSION"));
const AUTHOR: &str = "the Fortress developers";

/// The options the engine offers, with their limits, as `uci` lists them.
fn option_list() -> Vec<(&'static str, OptionKind)> {
    vec![
        (
            "Hash",
            OptionKind::Spin {
                default: DEFAULT_HASH_MB as i64,
                min: 1,
                max: 65_536,
            },
        ),
        (
            "Threads",
            OptionKind::Spin {
                default: 1,
                min: 1,
                max: 256,
            },
        ),
        ("Clear Hash", OptionKind::Button),
        ("Ponder", OptionKind::Check { default: false }),
        (
            "MultiPV",
            OptionKind::Spin {
                default: 1,
                min: 1,
                max: 256,
            },
        ),
        (
            "Move Overhead",
            OptionKind::Spin {
                default: DEFAULT_OVERHEAD_MS as i64,
                min: 0,
                max: 5_000,
            },
        ),
        ("BlockageDetection", OptionKind::Check { default: true }),
        (
            "EvalFile",
            OptionKind::String {
                default: BUILT_IN_NETWORK.to_string(),
            },
        ),
        (
            "NalimovPath",
            OptionKind::String {
                default: default_dir().display().to_string(),
            },
        ),
        (
            "NalimovCache",
            OptionKind::Spin {
                default: 64,
                min: 1,
                max: 1024,
            },
        ),
        (
            "SyzygyPath",
            OptionKind::String {
                default: "<empty>".to_string(),
            },
        ),
        (
            "SyzygyProbeDepth",
            OptionKind::Spin {
                default: SyzygyUse::DEFAULT_PROBE_DEPTH as i64,
                min: 1,
                max: 100,
            },
        ),
        ("Syzygy50MoveRule", OptionKind::Check { default: true }),
        (
            "SyzygyProbeLimit",
            OptionKind::Spin {
                default: SyzygyUse::DEFAULT_MAX_MEN as i64,
                min: 0,
                max: 7,
            },
        ),
        ("GenerateMissingTables", OptionKind::Check { default: true }),
        (
            "GenerateMaxMen",
            OptionKind::Spin {
                default: 4,
                min: 3,
                max: 5,
            },
        ),
    ]
}

/// Whether the machine can back `threads` search threads, each with its own table block cache
/// of `cache_bytes` (the caches are filled as the tables are probed, so they are counted in
/// full before a user's setting is accepted).
fn thread_memory(threads: usize, cache_bytes: usize) -> Result<(), OutOfMemory> {
    let each = THREAD_MEMORY_BYTES.saturating_add(cache_bytes as u64);
    memory::check((threads as u64).saturating_mul(each))
}

const DEFAULT_HASH_MB: usize = 16;

/// `EvalFile`'s value for the network built into the binary.
const BUILT_IN_NETWORK: &str = "<built-in>";

const DEFAULT_OVERHEAD_MS: u64 = 10;

/// Where output goes: shared by the input loop and the search thread, one whole line at a time.
type Out = Arc<Mutex<Box<dyn Write + Send>>>;

fn say(out: &Out, text: &str) {
    // A lost GUI (closed pipe) is not worth a panic: the next read ends the session anyway.
    if let Ok(mut w) = out.lock() {
        let _ = writeln!(w, "{}", text);
        let _ = w.flush();
    }
}

struct Running {
    control: Arc<Control>,
    handle: JoinHandle<()>,
    /// Set by the search thread once its `bestmove` is out: the search is over for the GUI,
    /// even if the thread has not quite ended yet.
    answered: Arc<std::sync::atomic::AtomicBool>,
}

/// The Syzygy options as set: the search gets them together (`SyzygyUse`) once tables are open.
struct SyzygyOptions {
    tables: Option<Arc<Syzygy>>,
    probe_depth: i32,
    rule50: bool,
    max_men: u32,
}

impl SyzygyOptions {
    fn in_use(&self) -> Option<SyzygyUse> {
        Some(SyzygyUse {
            tables: Arc::clone(self.tables.as_ref()?),
            probe_depth: self.probe_depth,
            rule50: self.rule50,
            max_men: self.max_men,
        })
    }
}

pub struct Session {
    engine: Arc<Engine>,
    tables: Arc<Tablebases>,
    /// The worker that builds the tables the search finds missing; owned here, handed the
    /// registry.
    _background: Background,
    syzygy: SyzygyOptions,
    position: Position,
    running: Option<Running>,
    out: Out,
}

impl Session {
    pub fn new(out: Box<dyn Write + Send>) -> Session {
        let mut engine = Engine::new(DEFAULT_HASH_MB);
        engine.move_overhead_ms = DEFAULT_OVERHEAD_MS;
        let out: Out = Arc::new(Mutex::new(out));
        // The tables report through a sink: egtb does not know UCI.
        let tables = Tablebases::new();
        let sink_out = Arc::clone(&out);
        tables.set_sink(Some(Arc::new(move |text: &str| {
            say(&sink_out, &format!("info string {}", text))
        })));
        tables.set_path(vec![default_dir()]);
        tables
            .generate_missing
            .store(true, std::sync::atomic::Ordering::Relaxed);
        let background = Background::start(&tables);
        engine.tables = Some(Arc::clone(&tables));
        Session {
            engine: Arc::new(engine),
            tables,
            _background: background,
            syzygy: SyzygyOptions {
                tables: None,
                probe_depth: SyzygyUse::DEFAULT_PROBE_DEPTH,
                rule50: true,
                max_men: SyzygyUse::DEFAULT_MAX_MEN,
            },
            position: Position::startpos(),
            running: None,
            out,
        }
    }

    fn error(&self, text: &str) {
        say(&self.out, &format!("info string error: {}", text));
    }

    /// Handles one line; returns false on `quit`.
    pub fn handle_line(&mut self, line: &str) -> bool {
        match protocol::parse_line(line) {
            Parsed::Ignored => {}
            Parsed::Error(e) => self.error(&e),
            Parsed::Command(c) => return self.handle(c),
        }
        true
    }

    fn handle(&mut self, command: Command) -> bool {
        match command {
            Command::Uci => {
                say(&self.out, &protocol::format_id(NAME, AUTHOR));
                for (name, kind) in option_list() {
                    say(&self.out, &protocol::format_option(name, &kind));
                }
                say(&self.out, "uciok");
            }
            Command::Debug(_) => {}
            Command::IsReady => {
                self.tables.rescan();
                say(&self.out, "readyok")
            }
            Command::UciNewGame => {
                self.finish_search();
                self.engine.clear_hash();
            }
            Command::SetOption { name, value } => self.set_option(&name, value.as_deref()),
            Command::Position { fen, moves } => self.set_position(fen.as_deref(), &moves),
            Command::Go(params) => self.go(params),
            Command::Stop => {
                if let Some(r) = &self.running {
                    r.control.stop();
                }
            }
            Command::PonderHit => {
                if let Some(r) = &self.running {
                    r.control.ponderhit();
                }
            }
            Command::Quit => {
                self.finish_search();
                return false;
            }
        }
        true
    }

    /// Stops any search and waits for its `bestmove`.
    fn finish_search(&mut self) {
        if let Some(r) = self.running.take() {
            r.control.stop();
            let _ = r.handle.join();
        }
    }

    fn searching(&mut self) -> bool {
        if let Some(r) = &self.running {
            if r.handle.is_finished() || r.answered.load(std::sync::atomic::Ordering::SeqCst) {
                let r = self.running.take().expect("checked above");
                let _ = r.handle.join();
                return false;
            }
            return true;
        }
        false
    }

    fn set_option(&mut self, name: &str, value: Option<&str>) {
        let known = option_list();
        let Some((canonical, kind)) = known.iter().find(|(n, _)| n.eq_ignore_ascii_case(name))
        else {
            self.error(&format!("unknown option '{}'", name));
            return;
        };
        if self.searching() {
            self.error("options cannot change during a search");
            return;
        }
        let number = |v: Option<&str>| -> Result<i64, String> {
            let (OptionKind::Spin { min, max, .. }, Some(text)) = (kind, v) else {
                return Err(format!("option '{}' needs a value", canonical));
            };
            match text.trim().parse::<i64>() {
                Ok(n) if (*min..=*max).contains(&n) => Ok(n),
                _ => Err(format!(
                    "option '{}' takes a number from {} to {}, not '{}'",
                    canonical, min, max, text
                )),
            }
        };
        let boolean = |v: Option<&str>| match v.map(str::trim) {
            Some("true") => Ok(true),
            Some("false") => Ok(false),
            _ => Err(format!("option '{}' takes true or false", canonical)),
        };
        let Some(engine) = Arc::get_mut(&mut self.engine) else {
            self.error("options cannot change while a search is finishing");
            return;
        };
        let result = match *canonical {
            "Hash" => number(value).and_then(|n| {
                engine.set_hash(n as usize).map_err(|e| {
                    format!(
                        "Hash {n} MB refused ({e}); the {} MB table is kept",
                        engine.hash_megabytes()
                    )
                })
            }),
            "Threads" => number(value).and_then(|n| {
                let kept = engine.threads();
                thread_memory(n as usize, crate::egtb::cache_bytes())
                    .map_err(|e| e.to_string())
                    .and_then(|()| engine.set_threads(n as usize))
                    .map_err(|e| format!("Threads {n} refused ({e}); {kept} kept"))
            }),
            "MultiPV" => number(value).map(|n| engine.multipv = n as usize),
            "Move Overhead" => number(value).map(|n| engine.move_overhead_ms = n as u64),
            "Clear Hash" => {
                engine.clear_hash();
                Ok(())
            }
            "BlockageDetection" => boolean(value).map(|b| engine.blockage_detection = b),
            "EvalFile" => match value.map(str::trim) {
                None | Some("") | Some(BUILT_IN_NETWORK) => {
                    engine.network = Network::built_in();
                    Ok(())
                }
                Some(path) => Network::load(std::path::Path::new(path))
                    .map(|net| {
                        say(
                            &self.out,
                            &format!(
                                "info string EvalFile: {path}, hidden layer {}, {} output buckets",
                                net.hidden(),
                                net.buckets()
                            ),
                        );
                        engine.network = Arc::new(net);
                    })
                    .map_err(|e| format!("EvalFile: {e}; the network in use is kept")),
            },
            "NalimovPath" => {
                let dirs = split_path(value.unwrap_or(""));
                self.tables.set_path(dirs);
                Ok(())
            }
            "NalimovCache" => number(value).and_then(|n| {
                let bytes = (n as usize) << 20;
                thread_memory(engine.threads(), bytes)
                    .map(|()| crate::egtb::set_cache_bytes(bytes))
                    .map_err(|e| {
                        format!(
                            "NalimovCache {n} MB for each of {} threads refused ({e}); {} MB kept",
                            engine.threads(),
                            crate::egtb::cache_bytes() >> 20
                        )
                    })
            }),
            "SyzygyPath" => {
                // The prober holds one set of tables per process: let go of the old ones first.
                engine.syzygy = None;
                self.syzygy.tables = None;
                let dirs = syzygy::split_path(value.unwrap_or(""));
                if dirs.is_empty() {
                    say(
                        &self.out,
                        "info string Syzygy: no path; Syzygy tables not used",
                    );
                    Ok(())
                } else {
                    Syzygy::open(&dirs)
                        .map(|t| {
                            for line in t.left_out() {
                                say(&self.out, &format!("info string {line}"));
                            }
                            say(&self.out, &format!("info string {}", t.describe()));
                            self.syzygy.tables = Some(t);
                        })
                        .map_err(|e| format!("SyzygyPath: {e}; Syzygy tables not used"))
                }
            }
            "SyzygyProbeDepth" => number(value).map(|n| self.syzygy.probe_depth = n as i32),
            "Syzygy50MoveRule" => boolean(value).map(|b| self.syzygy.rule50 = b),
            "SyzygyProbeLimit" => number(value).map(|n| self.syzygy.max_men = n as u32),
            "GenerateMissingTables" => boolean(value).map(|b| {
                self.tables
                    .generate_missing
                    .store(b, std::sync::atomic::Ordering::Relaxed)
            }),
            "GenerateMaxMen" => number(value).map(|n| {
                self.tables
                    .generate_max_men
                    .store(n as u8, std::sync::atomic::Ordering::Relaxed)
            }),
            // Pondering is the GUI's business (it sends `go ponder`); the option only tells it we can.
            "Ponder" => boolean(value).map(|_| ()),
            _ => Err(format!("option '{}' is not handled", canonical)),
        };
        if canonical.starts_with("Syzygy") {
            engine.syzygy = self.syzygy.in_use();
        }
        if let Err(e) = result {
            self.error(&e);
        }
    }

    fn set_position(&mut self, fen: Option<&str>, moves: &[String]) {
        let mut pos = match fen {
            None => Position::startpos(),
            Some(f) => match Position::from_fen(f) {
                Ok(p) => p,
                Err(e) => return self.error(&e.to_string()),
            },
        };
        for (i, text) in moves.iter().enumerate() {
            match parse_uci_move(&pos, text) {
                Some(m) => pos.make_move(m),
                None => {
                    return self.error(&format!(
                        "illegal move '{}' (move {} of the list) in {}; position unchanged",
                        text,
                        i + 1,
                        pos.to_fen()
                    ))
                }
            }
            // Only moves since the last capture or pawn move matter for repetitions.
            pos.forget_history_before_clock();
        }
        self.position = pos;
    }

    fn go(&mut self, params: GoParams) {
        // A search told to stop is about to answer: wait for its bestmove rather than refuse.
        if self.running.as_ref().is_some_and(|r| r.control.stopped()) {
            self.finish_search();
        }
        if self.searching() {
            self.error("a search is already running; send stop first");
            return;
        }
        let mut searchmoves = Vec::new();
        for text in &params.searchmoves {
            match parse_uci_move(&self.position, text) {
                Some(m) => searchmoves.push(m),
                None => {
                    return self.error(&format!("searchmoves: '{}' is not a legal move here", text))
                }
            }
        }
        let limits = Limits {
            wtime: params.wtime,
            btime: params.btime,
            winc: params.winc.unwrap_or(0),
            binc: params.binc.unwrap_or(0),
            movestogo: params.movestogo.filter(|&n| n > 0),
            depth: params.depth,
            nodes: params.nodes,
            mate: params.mate,
            movetime: params.movetime,
            infinite: params.infinite,
            ponder: params.ponder,
            searchmoves,
        };
        // Tables that appeared or disappeared since the last search.
        self.tables.rescan();
        let control = Arc::new(Control::new(params.ponder));
        let engine = Arc::clone(&self.engine);
        let position = self.position.clone();
        let out = Arc::clone(&self.out);
        let thread_control = Arc::clone(&control);
        let answered = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let thread_answered = Arc::clone(&answered);
        let handle = std::thread::Builder::new()
            .name("search".into())
            .stack_size(64 << 20)
            .spawn(move || {
                let result = engine.search(&position, &limits, &thread_control, &mut |r| {
                    say(&out, &protocol::format_info(&info_of(r)))
                });
                let best = result.best.map_or("0000".to_string(), |m| m.to_string());
                let ponder = result.ponder.map(|m| m.to_string());
                // Before the line goes out: a GUI reacting to it finds the search over.
                thread_answered.store(true, std::sync::atomic::Ordering::SeqCst);
                say(&out, &protocol::format_bestmove(&best, ponder.as_deref()));
            })
            .expect("spawning the search thread");
        self.running = Some(Running {
            control,
            handle,
            answered,
        });
    }
}

fn info_of(r: &Report) -> Info {
    Info {
        depth: Some(r.depth),
        seldepth: Some(r.seldepth),
        multipv: Some(r.multipv),
        score: Some((
            match r.score {
                search::Score::Cp(v) => protocol::Score::Cp(v),
                search::Score::Mate(n) => protocol::Score::Mate(n),
            },
            match r.bound {
                search::Bound::Exact => protocol::Bound::Exact,
                search::Bound::Lower => protocol::Bound::Lower,
                search::Bound::Upper => protocol::Bound::Upper,
            },
        )),
        nodes: Some(r.nodes),
        nps: Some(r.nps),
        hashfull: Some(r.hashfull),
        tbhits: Some(r.tbhits),
        time_ms: Some(r.time_ms),
        pv: r.pv.iter().map(|m| m.to_string()).collect(),
        ..Default::default()
    }
}

/// Runs the UCI loop until `quit` or the end of input.
pub fn run(input: impl BufRead, output: Box<dyn Write + Send>) {
    let mut session = Session::new(output);
    // Lines are read as bytes: invalid UTF-8 from a GUI is replaced, not fatal.
    for line in input.split(b'\n') {
        let Ok(bytes) = line else { break };
        let text = String::from_utf8_lossy(&bytes);
        if !session.handle_line(&text) {
            return;
        }
    }
    session.finish_search();
}
