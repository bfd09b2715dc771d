//! `engine datagen`: games of the engine against itself at a fixed node count, the training
//! data of the evaluation. Each game starts from a book position plus a few random plies; every
//! position where the side to move is not in check and the search's move is quiet is kept with
//! the search's score, and labelled with the game's result once it is known (`record`).
//!
//! - **Several games at once,** one per thread, each with its own search and table; the games
//!   are written in their order, so the file depends on the seed (and the tables present), not
//!   on the threads.
//! - **Deterministic:** game g draws its opening and random plies from a generator seeded by
//!   (seed, g), and a one-thread search to a node count from a cleared table is deterministic.
//! - **Resumable:** beside the file, `FILE.progress` records the arguments, the games written and
//!   the file's length at the last checkpoint (after the data is flushed to disk). A run on the
//!   same file with the same arguments cuts off what came after the checkpoint and goes on; a
//!   larger `--games` extends a finished file.
//! - **Endgame tables:** a game ends at its first position that the tables present cover; its
//!   result is the tables' verdict under the 50-move rule from the game's half-move clock, and
//!   the records of that game say so (`from_tables`).

use super::record::{GameResult, Record, RECORD_BYTES};
use crate::chess::{legal_moves, Color, Position};
use crate::egtb::{Tablebases, Wdl};
use crate::eval::network::Network;
use crate::search::{Control, Engine, Limits, MATE_BOUND};
use fastrand::Rng;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct DatagenArgs {
    /// The record file written (and resumed).
    pub out: PathBuf,
    /// Games the file holds when the run ends.
    pub games: u64,
    /// Nodes searched per move.
    pub nodes: u64,
    /// Random legal plies played after the opening.
    pub random_plies: usize,
    pub seed: u64,
    pub threads: usize,
    /// The network that evaluates.
    pub network: Arc<Network>,
}

#[derive(Debug, thiserror::Error)]
pub enum DatagenError {
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("{0} exists and has no progress file beside it: not a datagen run to resume; choose another file")]
    NotResumable(PathBuf),
    #[error("{0}: {1}")]
    Progress(PathBuf, String),
    #[error("{path} was made with {field} {was}, not {now}: resume it with the same arguments or choose another file")]
    Mismatch {
        path: PathBuf,
        field: &'static str,
        was: String,
        now: String,
    },
}

/// What the file holds: the checkpoint written to `FILE.progress`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    pub games: u64,
    pub positions: u64,
    /// Games by White's result: loss, draw, win.
    pub results: [u64; 3],
    /// Games whose result came from the endgame tables.
    pub table_games: u64,
}

/// The arguments a resumed run must share with the run that began the file.
struct Fingerprint {
    seed: u64,
    nodes: u64,
    random_plies: usize,
    openings: u64,
    /// "network-" and the network's checksum.
    evaluation: String,
}

/// The evaluation of files made before networks existed, which is gone: such a file cannot be
/// resumed.
const HAND_WRITTEN: &str = "hand-written";

const MAGIC: &str = "fortress datagen 1";

/// How often the file is made durable and the progress file rewritten.
const CHECKPOINT: Duration = Duration::from_secs(2);

/// One finished game: its records and result.
struct Game {
    records: Vec<Record>,
    result: GameResult,
    from_tables: bool,
}

/// Plays the games `args` asks for from `openings` (none: the start position) into
/// `args.out`, resuming what is there; `on_game` is told what the file holds after each game
/// written. Returns what the file holds at the end, and the games this run played.
pub fn run(
    openings: &[Position],
    tables: Option<Arc<Tablebases>>,
    args: &DatagenArgs,
    on_game: &mut dyn FnMut(&Progress),
) -> Result<(Progress, u64), DatagenError> {
    let print = Fingerprint {
        seed: args.seed,
        nodes: args.nodes,
        random_plies: args.random_plies,
        openings: openings_fingerprint(openings),
        evaluation: format!("network-{:016x}", args.network.checksum()),
    };
    let (mut file, mut done) = open(&args.out, &print)?;
    let first = done.games;
    let io = |e| DatagenError::Io(args.out.clone(), e);
    let next = AtomicU64::new(first);
    let stop = AtomicBool::new(false);
    let (tx, rx) = crossbeam::channel::unbounded::<(u64, Game)>();
    std::thread::scope(|scope| -> Result<(), DatagenError> {
        for _ in 0..args.threads.max(1) {
            let (tx, next, stop, tables) = (tx.clone(), &next, &stop, tables.clone());
            scope.spawn(move || {
                let mut engine = Engine::new(16);
                engine.network = args.network.clone();
                let mut reader = tables.as_ref().map(|t| t.reader());
                engine.tables = tables;
                loop {
                    let g = next.fetch_add(1, Relaxed);
                    if g >= args.games || stop.load(Relaxed) {
                        break;
                    }
                    let game = play(&mut engine, reader.as_mut(), openings, args, g);
                    if tx.send((g, game)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        // Games come in any order; they are written in theirs.
        let mut waiting = BTreeMap::new();
        let mut last_checkpoint = Instant::now();
        let mut write = || -> Result<(), DatagenError> {
            for (g, game) in rx.iter() {
                waiting.insert(g, game);
                while let Some(game) = waiting.remove(&done.games) {
                    for r in &game.records {
                        file.write_all(&r.to_bytes()).map_err(io)?;
                    }
                    done.games += 1;
                    done.positions += game.records.len() as u64;
                    done.results[game.result as usize] += 1;
                    done.table_games += game.from_tables as u64;
                    on_game(&done);
                }
                if last_checkpoint.elapsed() >= CHECKPOINT {
                    checkpoint(&mut file, &args.out, &print, &done)?;
                    last_checkpoint = Instant::now();
                }
            }
            checkpoint(&mut file, &args.out, &print, &done)
        };
        let written = write();
        // On an error (a full disk) the players stop at their next game.
        stop.store(true, Relaxed);
        written
    })?;
    Ok((done.clone(), done.games - first))
}

/// The progress file of `out`.
pub fn progress_path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".progress");
    PathBuf::from(name)
}

/// Opens `out` for appending after its last checkpoint, or creates it.
fn open(out: &Path, print: &Fingerprint) -> Result<(BufWriter<File>, Progress), DatagenError> {
    let io = |e| DatagenError::Io(out.to_path_buf(), e);
    let side = progress_path(out);
    let done = match std::fs::read_to_string(&side) {
        Ok(text) => parse_progress(&text, print).map_err(|e| match e {
            ParseError::Text(t) => DatagenError::Progress(side.clone(), t),
            ParseError::Mismatch(field, was, now) => DatagenError::Mismatch {
                path: out.to_path_buf(),
                field,
                was,
                now,
            },
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if std::fs::metadata(out).is_ok_and(|m| m.len() > 0) {
                return Err(DatagenError::NotResumable(out.to_path_buf()));
            }
            Progress::default()
        }
        Err(e) => return Err(DatagenError::Io(side, e)),
    };
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(out)
        .map_err(io)?;
    let bytes = done.positions * RECORD_BYTES as u64;
    let len = file.metadata().map_err(io)?.len();
    if len < bytes {
        return Err(DatagenError::Progress(
            side,
            format!("says {bytes} bytes were written, but the file holds {len}"),
        ));
    }
    // What a stopped run wrote after its last checkpoint is cut off and played again.
    file.set_len(bytes).map_err(io)?;
    let mut file = BufWriter::with_capacity(1 << 20, file);
    use std::io::Seek;
    file.seek(std::io::SeekFrom::Start(bytes)).map_err(io)?;
    Ok((file, done))
}

/// Makes the file durable up to `done`, then says so in the progress file (written whole, then
/// renamed over the old one).
fn checkpoint(
    file: &mut BufWriter<File>,
    out: &Path,
    print: &Fingerprint,
    done: &Progress,
) -> Result<(), DatagenError> {
    let io = |e| DatagenError::Io(out.to_path_buf(), e);
    file.flush().map_err(io)?;
    file.get_ref().sync_data().map_err(io)?;
    let side = progress_path(out);
    let mut tmp = side.clone().into_os_string();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let text = format!(
        "{MAGIC}\nseed {}\nnodes {}\nrandom_plies {}\nopenings {:016x}\nevaluation {}\ngames {}\npositions {}\nresults {} {} {}\ntable_games {}\n",
        print.seed,
        print.nodes,
        print.random_plies,
        print.openings,
        print.evaluation,
        done.games,
        done.positions,
        done.results[0],
        done.results[1],
        done.results[2],
        done.table_games
    );
    let side_io = |e| DatagenError::Io(side.clone(), e);
    let mut f = File::create(&tmp).map_err(side_io)?;
    f.write_all(text.as_bytes()).map_err(side_io)?;
    f.sync_all().map_err(side_io)?;
    std::fs::rename(&tmp, &side).map_err(side_io)
}

enum ParseError {
    Text(String),
    Mismatch(&'static str, String, String),
}

/// The progress file's checkpoint, if it was made with the arguments of `print`.
fn parse_progress(text: &str, print: &Fingerprint) -> Result<Progress, ParseError> {
    let mut lines = text.lines();
    if lines.next() != Some(MAGIC) {
        return Err(ParseError::Text("not a datagen progress file".into()));
    }
    let mut fields = BTreeMap::new();
    for line in lines {
        let (key, value) = line
            .split_once(' ')
            .ok_or_else(|| ParseError::Text(format!("bad line {line:?}")))?;
        fields.insert(key, value);
    }
    let field = |key: &'static str| {
        fields
            .get(key)
            .copied()
            .ok_or_else(|| ParseError::Text(format!("no {key}")))
    };
    let number = |key: &'static str, s: &str| {
        s.parse::<u64>()
            .map_err(|_| ParseError::Text(format!("bad {key} {s:?}")))
    };
    let same = |key: &'static str, now: String| -> Result<(), ParseError> {
        let was = field(key)?;
        if was == now {
            Ok(())
        } else {
            Err(ParseError::Mismatch(key, was.to_string(), now))
        }
    };
    same("seed", print.seed.to_string())?;
    same("nodes", print.nodes.to_string())?;
    same("random_plies", print.random_plies.to_string())?;
    same("openings", format!("{:016x}", print.openings))?;
    let evaluation = fields.get("evaluation").copied().unwrap_or(HAND_WRITTEN);
    if evaluation != print.evaluation {
        return Err(ParseError::Mismatch(
            "evaluation",
            evaluation.to_string(),
            print.evaluation.clone(),
        ));
    }
    let results: Vec<u64> = field("results")?
        .split(' ')
        .map(|s| number("results", s))
        .collect::<Result<_, _>>()?;
    let results: [u64; 3] = results
        .try_into()
        .map_err(|_| ParseError::Text("results needs three counts".into()))?;
    let p = Progress {
        games: number("games", field("games")?)?,
        positions: number("positions", field("positions")?)?,
        results,
        table_games: number("table_games", field("table_games")?)?,
    };
    if results.iter().sum::<u64>() != p.games || p.table_games > p.games {
        return Err(ParseError::Text("counts that do not add up".into()));
    }
    Ok(p)
}

/// A fingerprint of the book: a resumed run must draw from the same openings.
fn openings_fingerprint(openings: &[Position]) -> u64 {
    openings
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |h, p| splitmix(h ^ p.key()))
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Game `g` of the run.
fn play(
    engine: &mut Engine,
    mut tables: Option<&mut crate::egtb::TbReader>,
    openings: &[Position],
    args: &DatagenArgs,
    g: u64,
) -> Game {
    let mut rng = Rng::with_seed(splitmix(args.seed ^ splitmix(g)));
    let limits = Limits {
        nodes: Some(args.nodes),
        ..Default::default()
    };
    let mut records = Vec::new();
    let Some(mut pos) = start_position(openings, args.random_plies, &mut rng) else {
        return Game {
            records,
            result: GameResult::Draw,
            from_tables: false,
        };
    };
    engine.clear_hash();
    let mut result = None;
    let mut from_tables = false;
    let (mut winning_plies, mut drawn_plies) = (0i32, 0u32);
    for ply in 0.. {
        if legal_moves(&pos).is_empty() {
            result = Some(match (pos.in_check(), pos.side_to_move()) {
                (false, _) => GameResult::Draw,
                (true, Color::White) => GameResult::Loss,
                (true, Color::Black) => GameResult::Win,
            });
            break;
        }
        if pos.repetitions() >= 2 || pos.halfmove_clock() >= 100 || pos.insufficient_material() {
            break;
        }
        if let Some(probe) = tables.as_mut().and_then(|t| t.probe(&pos)) {
            let wdl = probe.wdl50(pos.halfmove_clock());
            let white_wins = (wdl == Wdl::Win) == (pos.side_to_move() == Color::White);
            result = Some(match wdl {
                Wdl::Draw => GameResult::Draw,
                _ if white_wins => GameResult::Win,
                _ => GameResult::Loss,
            });
            from_tables = true;
            break;
        }
        let found = engine.search(&pos, &limits, &Control::new(false), &mut |_| {});
        let Some(best) = found.best else { break };
        let white_score = if pos.side_to_move() == Color::White {
            found.score
        } else {
            -found.score
        };
        // Adjudication: a side ahead by 10 pawns for 8 plies wins; a score within 0.10 for
        // 20 plies after move 40 is a draw; 400 plies are a draw.
        winning_plies = match white_score {
            s if s >= 1000 => winning_plies.max(0) + 1,
            s if s <= -1000 => winning_plies.min(0) - 1,
            _ => 0,
        };
        drawn_plies = if white_score.abs() <= 10 {
            drawn_plies + 1
        } else {
            0
        };
        if winning_plies.abs() >= 8 {
            result = Some(if winning_plies > 0 {
                GameResult::Win
            } else {
                GameResult::Loss
            });
            break;
        }
        if (ply >= 80 && drawn_plies >= 20) || ply >= 400 {
            break;
        }
        let quiet = pos.piece_at(best.to()).is_none() && !best.is_promotion();
        if quiet && !pos.in_check() && found.score.abs() < MATE_BOUND {
            // The result is filled in when the game ends.
            records.push(Record::new(
                &pos,
                white_score as i16,
                GameResult::Draw,
                false,
            ));
        }
        pos.make_move(best);
    }
    let result = result.unwrap_or(GameResult::Draw);
    for r in &mut records {
        r.result = result;
        r.from_tables = from_tables;
    }
    Game {
        records,
        result,
        from_tables,
    }
}

/// A random book position with `plies` random legal moves played on it; `None` if the game ended.
fn start_position(openings: &[Position], plies: usize, rng: &mut Rng) -> Option<Position> {
    let mut pos = if openings.is_empty() {
        Position::startpos()
    } else {
        openings[rng.usize(..openings.len())].clone()
    };
    for _ in 0..plies {
        let moves = legal_moves(&pos);
        if moves.is_empty() {
            return None;
        }
        pos.make_move(moves.as_slice()[rng.usize(..moves.len())]);
    }
    Some(pos)
}

/// Reads the FENs of an EPD or FEN file (the first four fields of each line; clocks default).
pub fn read_openings(reader: impl BufRead) -> Vec<Position> {
    reader
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().take(4).collect();
            if fields.len() < 4 {
                return None;
            }
            Position::from_fen(&fields.join(" ")).ok()
        })
        .collect()
}

/// Reads a record file whole; an error names the first damaged record.
pub fn read_records(path: &Path) -> Result<Vec<Record>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() % RECORD_BYTES != 0 {
        return Err(format!(
            "{}: {} bytes, not whole records of {RECORD_BYTES}",
            path.display(),
            bytes.len()
        ));
    }
    bytes
        .chunks_exact(RECORD_BYTES)
        .enumerate()
        .map(|(i, b)| {
            Record::from_bytes(b.try_into().expect("a whole record"))
                .map_err(|e| format!("{}: record {i}: {e}", path.display()))
        })
        .collect()
}
