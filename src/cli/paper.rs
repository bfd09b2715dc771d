//! `engine tbinfo --paper [ENDGAME] [--dir DIR] [--json]`: prints `egtb::report::paper`'s comparison of
//! the six-man tables of a directory with Bourzutschky, Tamplin, Haworth (2005), Tables 3-6,
//! each endgame as it is done (text), or one JSON object at the end.

use crate::egtb::format::Metric;
use crate::egtb::report::paper::{compare_dir, Checked, Figure, Paper};
use crate::egtb::Material;
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Compares and prints; the exit status is 0 if every figure equals the paper's, 1 if one
/// differs, 2 if something could not be compared (no such directory, an endgame the paper does
/// not cover, a table refused, nothing to compare).
pub fn run(endgame: Option<&str>, dir: &Path, json: bool) -> ExitCode {
    let fail = |e: &dyn std::fmt::Display| {
        eprintln!("tbinfo --paper: {e}");
        ExitCode::from(2)
    };
    let only = match endgame.map(Material::parse).transpose() {
        Ok(m) => m,
        Err(e) => return fail(&e),
    };
    let paper = match Paper::load() {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let mut tally = Tally::default();
    let mut entries = Vec::new();
    let done = compare_dir(&paper, dir, only.as_ref(), &mut |c| {
        tally.add(&c);
        if json {
            // A run over many endgames takes hours: say how far it has come.
            let e = EndgameJson::from(c);
            eprintln!("{}: {}", e.endgame, e.status);
            entries.push(e);
        } else {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(to_text(&c).as_bytes());
            let _ = out.flush();
        }
    });
    if let Err(e) = done {
        return fail(&e);
    }
    if json {
        let report = ReportJson {
            dir: dir.display().to_string(),
            endgames: entries,
            compared: tally.compared,
            figures: tally.figures,
            different: tally.different,
            not_compared: tally.not_compared,
        };
        println!(
            "{}",
            serde_json::to_string(&report).expect("plain data serialises")
        );
    } else {
        println!(
            "{} endgames compared, {} figures, {} DIFFERENT; {} endgames of the paper present but \
             not compared",
            tally.compared, tally.figures, tally.different, tally.not_compared
        );
    }
    if tally.compared == 0 {
        eprintln!(
            "tbinfo --paper: nothing compared: no endgame of the paper has three valid tables \
             in {}",
            dir.display()
        );
        ExitCode::from(2)
    } else if tally.not_compared > 0 {
        ExitCode::from(2)
    } else if tally.different > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// What the exit status and the last line need.
#[derive(Default)]
struct Tally {
    compared: usize,
    figures: usize,
    different: usize,
    /// Endgames of the paper with files present that could not be compared.
    not_compared: usize,
}

impl Tally {
    fn add(&mut self, c: &Checked) {
        match c {
            Checked::Compared { figures, .. } => {
                self.compared += 1;
                self.figures += figures.len();
                self.different += figures.iter().filter(|f| !f.equal).count();
            }
            Checked::Incomplete { .. } | Checked::Failed { .. } => self.not_compared += 1,
            Checked::NotInPaper(_) => {}
        }
    }
}

fn missing_names(missing: &[Metric]) -> Vec<&'static str> {
    missing.iter().map(|m| m.name()).collect()
}

/// One endgame's lines: each figure, the paper's and ours, equal or DIFFERENT.
fn to_text(c: &Checked) -> String {
    match c {
        Checked::Compared {
            material,
            figures,
            seconds,
        } => {
            let mut o = format!(
                "{material}: compared in {seconds:.1} s\n  table  {:<40} {:>12} {:>12}\n",
                "figure", "paper", "ours"
            );
            for f in figures {
                let mark = if f.equal { "equal" } else { "DIFFERENT" };
                let note = f
                    .note
                    .as_deref()
                    .map_or(String::new(), |n| format!("  ({n})"));
                o += &format!(
                    "  {:<5}  {:<40} {:>12} {:>12}  {mark}{note}\n",
                    f.table, f.what, f.paper, f.ours
                );
            }
            o
        }
        Checked::Incomplete { material, missing } => format!(
            "{material}: not compared, missing its {} file(s)\n",
            missing_names(missing).join(", ")
        ),
        Checked::Failed { material, error } => format!("{material}: not compared: {error}\n"),
        Checked::NotInPaper(m) => format!("{m}: six men, tables present, not in the paper\n"),
    }
}

#[derive(Serialize)]
struct FigureJson {
    table: u8,
    what: String,
    paper: String,
    ours: String,
    equal: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

impl From<Figure> for FigureJson {
    fn from(f: Figure) -> FigureJson {
        FigureJson {
            table: f.table,
            what: f.what,
            paper: f.paper,
            ours: f.ours,
            equal: f.equal,
            note: f.note,
        }
    }
}

#[derive(Serialize)]
struct EndgameJson {
    endgame: String,
    /// "compared", "incomplete", "error" or "not in the paper".
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    seconds: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    figures: Vec<FigureJson>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    missing: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl From<Checked> for EndgameJson {
    fn from(c: Checked) -> EndgameJson {
        let (material, status) = match &c {
            Checked::Compared { material, .. } => (*material, "compared"),
            Checked::Incomplete { material, .. } => (*material, "incomplete"),
            Checked::Failed { material, .. } => (*material, "error"),
            Checked::NotInPaper(m) => (*m, "not in the paper"),
        };
        let mut e = EndgameJson {
            endgame: material.to_string(),
            status,
            seconds: None,
            figures: Vec::new(),
            missing: Vec::new(),
            error: None,
        };
        match c {
            Checked::Compared {
                figures, seconds, ..
            } => {
                e.seconds = Some(seconds);
                e.figures = figures.into_iter().map(FigureJson::from).collect();
            }
            Checked::Incomplete { missing, .. } => e.missing = missing_names(&missing),
            Checked::Failed { error, .. } => e.error = Some(error.to_string()),
            Checked::NotInPaper(_) => {}
        }
        e
    }
}

/// One JSON object: `{"dir", "endgames", "compared", "figures", "different", "not_compared"}`.
#[derive(Serialize)]
struct ReportJson {
    dir: String,
    endgames: Vec<EndgameJson>,
    compared: usize,
    figures: usize,
    different: usize,
    not_compared: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_figure_is_a_line_marked_equal_or_different() {
        let figure = |paper: &str, ours: &str| Figure {
            table: 3,
            what: "1-0 wtm max DTZ (moves)".to_string(),
            paper: paper.to_string(),
            ours: ours.to_string(),
            equal: paper == ours,
            note: None,
        };
        let c = Checked::Compared {
            material: Material::parse("KQRKQR").unwrap(),
            figures: vec![figure("92", "92"), figure("92", "91")],
            seconds: 1.0,
        };
        let text = to_text(&c);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(lines[2].ends_with(" equal"), "{text}");
        assert!(lines[3].ends_with(" DIFFERENT"), "{text}");
        let mut tally = Tally::default();
        tally.add(&c);
        assert_eq!((tally.compared, tally.figures, tally.different), (1, 2, 1));
    }
}
