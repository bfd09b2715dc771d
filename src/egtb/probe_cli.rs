//! `engine probe [FEN] [--dir DIR] [--json]`: the table values of a position and of each of its
//! legal moves, and the move the root strategy SZ°Z50⁻Z⁻ (`strategy`, Bourzutschky, Tamplin,
//! Haworth 2005, Section 5) picks given the FEN's half-move field. One answer per position;
//! with no FEN, FENs are read one per line from standard input.
//!
//! Depths are printed in plies to the goal (DTM converted from winner's moves: a win in k moves
//! is 2k - 1 plies, a loss in k moves 2k plies), 0 for a side already mated, null for a draw.
//! `wdl50` is from a fresh counter (the FEN's counter only enters the choice of `best`). Move
//! values are the mover's: the result of playing that move.

use super::probe::{analyse_root, depth, Registry, Tablebases, TbProbe};
use super::strategy;
use crate::chess::Position;
use std::io::Write;
use std::path::PathBuf;

/// Opens the tables of `dirs` (messages about unusable files go to `warn`).
pub fn open_registry(dirs: Vec<PathBuf>, warn: &mut dyn Write) -> std::sync::Arc<Registry> {
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

fn num(v: Option<u16>) -> String {
    v.map_or("null".to_string(), |n| n.to_string())
}

fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// Depths in plies of a probe: (dtm, dtz, dtz50).
fn plies(p: &TbProbe) -> (Option<u16>, Option<u16>, Option<u16>) {
    (p.dtm_plies(), depth(p.dtz), depth(p.dtz50))
}

fn values_json(p: &TbProbe) -> String {
    let (m, z, z50) = plies(p);
    format!(
        "\"wdl\": \"{}\", \"wdl50\": \"{}\", \"dtm\": {}, \"dtz\": {}, \"dtz50\": {}",
        p.wdl().name(),
        p.wdl50(0).name(),
        num(m),
        num(z),
        num(z50)
    )
}

/// One answer, in JSON or human form. Returns false if the position is not in the tables.
pub fn answer(reg: &Registry, fen: &str, json: bool, out: &mut dyn Write) -> bool {
    let fen = fen.trim();
    let err = |out: &mut dyn Write, e: &str| {
        if json {
            let _ = writeln!(
                out,
                "{{\"fen\": {}, \"error\": {}}}",
                json_str(fen),
                json_str(e)
            );
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
        let moves: Vec<String> = a
            .moves
            .iter()
            .map(|(m, v)| format!("{{\"uci\": \"{m}\", {}}}", values_json(&v.v)))
            .collect();
        let _ = writeln!(
            out,
            "{{\"fen\": {}, {}, \"best\": {}, \"moves\": [{}]}}",
            json_str(fen),
            values_json(&a.root),
            best.map_or("null".to_string(), |m| format!("\"{m}\"")),
            moves.join(", ")
        );
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
