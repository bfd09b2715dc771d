//! `engine probe [FEN] [--dir DIRS] [--json]`: the table values of a position and of each of its
//! legal moves, and the move the root strategy SZ°Z50⁻Z⁻ (`strategy`, Bourzutschky, Tamplin,
//! Haworth 2005, Section 5) picks given the FEN's half-move field. One answer per position;
//! with no FEN, FENs are read one per line from standard input.
//!
//! Depths are printed in plies to the goal (DTM converted from winner's moves: a win in k moves
//! is 2k - 1 plies, a loss in k moves 2k plies), 0 for a side already mated, null for a draw.
//! `wdl50` is from a fresh counter (the FEN's counter only enters the choice of `best`). Move
//! values are the mover's: the result of playing that move.

use crate::chess::Position;
use crate::egtb::play::probe::{default_dir, depth, split_path, Registry, Tablebases, TbProbe};
use crate::egtb::play::strategy::{self, analyse_root};
use serde::Serialize;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ProbeArgs {
    /// The position (default: FENs one per line on standard input).
    pub fen: Vec<String>,
    /// Table directories, separated by `;` (default: the engine's table directory).
    #[arg(long)]
    pub dir: Option<String>,
    /// One JSON object per position.
    #[arg(long)]
    pub json: bool,
}

/// Answers each position; exit status 2 if one was not in the tables.
pub fn run(args: &ProbeArgs) -> ExitCode {
    let dirs = args
        .dir
        .as_deref()
        .map_or_else(|| vec![default_dir()], split_path);
    let reg = open_registry(dirs, &mut std::io::stderr());
    let mut out = std::io::stdout().lock();
    let fen = args.fen.join(" ");
    let mut all = true;
    if fen.trim().is_empty() {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if !line.trim().is_empty() {
                all &= answer(&reg, &line, args.json, &mut out);
            }
        }
    } else {
        all = answer(&reg, &fen, args.json, &mut out);
    }
    if all {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    }
}

/// Opens the tables of `dirs` (messages about unusable files go to `warn`).
fn open_registry(dirs: Vec<PathBuf>, warn: &mut dyn Write) -> std::sync::Arc<Registry> {
    let tb = Tablebases::new();
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let l2 = std::sync::Arc::clone(&lines);
    tb.set_sink(Some(std::sync::Arc::new(move |s: &str| {
        l2.lock().expect("lines").push(s.to_string())
    })));
    tb.set_path(dirs);
    for l in lines.lock().expect("lines").iter() {
        let _ = writeln!(warn, "{l}");
    }
    tb.snapshot()
}

/// Depths in plies of a probe: (dtm, dtz, dtz50).
fn plies(p: &TbProbe) -> (Option<u16>, Option<u16>, Option<u16>) {
    (p.dtm_plies(), depth(p.dtz), depth(p.dtz50))
}

/// A position's or a move's values, as JSON.
#[derive(Serialize)]
struct Values {
    wdl: &'static str,
    wdl50: &'static str,
    dtm: Option<u16>,
    dtz: Option<u16>,
    dtz50: Option<u16>,
}

impl Values {
    fn of(p: &TbProbe) -> Values {
        let (dtm, dtz, dtz50) = plies(p);
        Values {
            wdl: p.wdl().name(),
            wdl50: p.wdl50(0).name(),
            dtm,
            dtz,
            dtz50,
        }
    }
}

#[derive(Serialize)]
struct MoveJson {
    uci: String,
    #[serde(flatten)]
    values: Values,
}

#[derive(Serialize)]
struct AnswerJson<'a> {
    fen: &'a str,
    #[serde(flatten)]
    values: Values,
    best: Option<String>,
    moves: Vec<MoveJson>,
}

#[derive(Serialize)]
struct ErrorJson<'a> {
    fen: &'a str,
    error: &'a str,
}

/// One answer, in JSON or human form. Returns false if the position is not in the tables.
fn answer(reg: &Registry, fen: &str, json: bool, out: &mut dyn Write) -> bool {
    let fen = fen.trim();
    let err = |out: &mut dyn Write, e: &str| {
        if json {
            let line = serde_json::to_string(&ErrorJson { fen, error: e });
            let _ = writeln!(out, "{}", line.expect("plain data serialises"));
        } else {
            let _ = writeln!(out, "{fen}\n  error: {e}");
        }
        false
    };
    let pos = match Position::from_fen(fen) {
        Ok(p) => p,
        Err(e) => return err(out, &e.to_string()),
    };
    if pos.castling_rights() != 0 {
        return err(out, "castling rights: not in the tables");
    }
    let Some(a) = analyse_root(reg, &pos, true) else {
        return err(
            out,
            &format!(
                "not in the tables ({} men; the tables present go up to {} men, or a table \
                 one move away is missing)",
                pos.men(),
                reg.max_men()
            ),
        );
    };
    let values: Vec<strategy::MoveValues> = a.moves.iter().map(|m| m.1).collect();
    let h = pos.halfmove_clock();
    let best = strategy::choose(h, &values).map(|c| a.moves[c.best].0);
    if json {
        let answer = AnswerJson {
            fen,
            values: Values::of(&a.root),
            best: best.map(|m| m.to_string()),
            moves: a
                .moves
                .iter()
                .map(|(m, v)| MoveJson {
                    uci: m.to_string(),
                    values: Values::of(&v.v),
                })
                .collect(),
        };
        let line = serde_json::to_string(&answer).expect("plain data serialises");
        let _ = writeln!(out, "{line}");
    } else {
        let (m, z, z50) = plies(&a.root);
        let show = |v: Option<u16>| v.map_or("-".to_string(), |n| n.to_string());
        let _ = writeln!(out, "{fen}");
        let _ = writeln!(
            out,
            "  result {} (50-move rule: {} from a fresh counter, {} with {h} on the counter)",
            a.root.wdl().name(),
            a.root.wdl50(0).name(),
            a.root.wdl50(h).name()
        );
        let _ = writeln!(
            out,
            "  DTM {} plies, DTZ {} plies, DTZ50 {} plies",
            show(m),
            show(z),
            show(z50)
        );
        let _ = writeln!(
            out,
            "  move    wdl   wdl50  dtm  dtz  dtz50   (mover's result)"
        );
        for (mv, v) in &a.moves {
            let (m, z, z50) = plies(&v.v);
            let _ = writeln!(
                out,
                "  {:<7} {:<5} {:<5} {:>4} {:>4} {:>6}",
                mv.to_string(),
                v.v.wdl().name(),
                v.v.wdl50(0).name(),
                show(m),
                show(z),
                show(z50)
            );
        }
        let _ = writeln!(
            out,
            "  SZ°Z50Z picks {} (half-move counter {h})",
            best.map_or("none".to_string(), |m| m.to_string())
        );
    }
    true
}
