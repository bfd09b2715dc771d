//! The six-man figures of Bourzutschky, Tamplin, Haworth (2005), "Chess endgames: 6-man data
//! and strategy", appendix Tables 3-6 (transcribed in `tests/data/bth_6man_*.csv`; corrections
//! to the scan in `tests/data/bth_6man_notes.md`), set beside what an endgame's tables give:
//! each figure with the paper's, equal or not (`engine tbinfo --paper`).

use crate::chess::{Color, Position};
use crate::egtb::format::{file_name, Metric, Outcome, TableError, TbValue};
use crate::egtb::index::Half;
use crate::egtb::material::Material;
use crate::egtb::play::probe::tb_position;
use crate::egtb::play::tables::EndgameTables;
use crate::egtb::report::dtz_stats::{scan, Deepest, EndgameStats, WinStats};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Instant;

/// The transcribed tables: file name (for messages) and text.
const TABLE3: (&str, &str) = (
    "bth_6man_dtz.csv",
    include_str!("../../../tests/data/bth_6man_dtz.csv"),
);
const TABLE4: (&str, &str) = (
    "bth_6man_dtz50.csv",
    include_str!("../../../tests/data/bth_6man_dtz50.csv"),
);
const TABLE5: (&str, &str) = (
    "bth_6man_rule50_impact.csv",
    include_str!("../../../tests/data/bth_6man_rule50_impact.csv"),
);
const TABLE6: (&str, &str) = (
    "bth_6man_examples.csv",
    include_str!("../../../tests/data/bth_6man_examples.csv"),
);

/// The paper's four columns in its order: 1-0 wtm, 1-0 btm, 0-1 wtm, 0-1 btm.
const COLUMNS: [(Color, Half); 4] = [
    (Color::White, Half::Wtm),
    (Color::White, Half::Btm),
    (Color::Black, Half::Wtm),
    (Color::Black, Half::Btm),
];

#[derive(Debug, thiserror::Error)]
pub enum PaperError {
    /// A transcribed table that does not read (a missing column, a field that is no number).
    #[error("{file} line {line}: {what}")]
    Data {
        file: &'static str,
        line: usize,
        what: String,
    },
    #[error("table directory {} does not exist", .0.display())]
    NoDirectory(PathBuf),
    #[error("{0} is not one of the paper's 135 endgames (six men, no pawns, 3-3 or 4-2)")]
    NotInPaper(Material),
    #[error(transparent)]
    Table(#[from] TableError),
    /// A Table 6 position that cannot be probed in its endgame's tables.
    #[error("Table 6 example {key}: {what}")]
    Example { key: &'static str, what: String },
}

/// Table 3 or 4 for one endgame, in `COLUMNS` order: the deepest win in moves (None: no such
/// wins) and the number of positions at that depth.
#[derive(Clone, Copy, Debug)]
struct Depths {
    max_moves: [Option<u16>; 4],
    at_max: [u64; 4],
}

/// Table 5 for one endgame, one result and one side to move. Percentages are of the nominal
/// (DTZ) wins, as printed: `47.03`, `0`, or `eps` (above 0, below 0.005).
#[derive(Clone, Copy, Debug)]
struct Impact {
    extra_draws: u64,
    delayed: u64,
    pct_extra_draws: &'static str,
    pct_delayed: &'static str,
}

/// A row of Table 6: one position of an endgame the 50-move rule changes, depths in plies.
#[derive(Clone, Debug)]
struct Example {
    /// The paper's name for it, e.g. `QR-QR` or `QN-BB2`.
    key: &'static str,
    material: Material,
    winner: Color,
    fen: &'static str,
    dtm: u16,
    dtz: u16,
    /// None: a draw under the 50-move rule.
    dtz50: Option<u16>,
}

/// The paper's Tables 3-6.
pub struct Paper {
    /// Table 3: all 135 endgames, in the paper's order.
    dtz: Vec<(Material, Depths)>,
    /// Table 4: the 63 endgames the 50-move rule changes.
    dtz50: Vec<(Material, Depths)>,
    /// Table 5: per endgame and winner, `[wtm, btm]`; a result without a row has none of
    /// either.
    impact: Vec<(Material, Color, [Impact; 2])>,
    examples: Vec<Example>,
}

/// One figure of the paper beside ours.
#[derive(Clone, Debug)]
pub struct Figure {
    /// The paper's table: 3 (DTZ), 4 (DTZ50), 5 (what the 50-move rule changes), 6 (examples).
    pub table: u8,
    /// What is compared, e.g. `1-0 wtm max DTZ (moves)` or `QR-QR DTZ50 (plies)`.
    pub what: String,
    pub paper: String,
    pub ours: String,
    pub equal: bool,
    /// Where the paper's figure comes from when its table has no row, or more of ours.
    pub note: Option<String>,
}

/// What became of one endgame in a table directory.
pub enum Checked {
    /// Its three tables compared, in this many seconds.
    Compared {
        material: Material,
        figures: Vec<Figure>,
        seconds: f64,
    },
    /// Some of its files are present, not all: not compared.
    Incomplete {
        material: Material,
        missing: Vec<Metric>,
    },
    /// Its files are present, but a table was refused or an example could not be probed.
    Failed {
        material: Material,
        error: PaperError,
    },
    /// A six-man endgame with its three files present that the paper does not cover.
    NotInPaper(Material),
}

impl Paper {
    /// Reads the transcribed tables (compiled into the program).
    pub fn load() -> Result<Paper, PaperError> {
        let depths = |(file, text): (&'static str, &'static str)| {
            read_csv(file, text, |row| {
                let mut d = Depths {
                    max_moves: [None; 4],
                    at_max: [0; 4],
                };
                for (k, &(winner, stm)) in COLUMNS.iter().enumerate() {
                    let column = column_name(winner, stm);
                    d.at_max[k] = row.number(&format!("n_max_{column}"))?;
                    let max = row.get(&format!("max_{column}"))?;
                    d.max_moves[k] = if max.is_empty() {
                        None
                    } else {
                        Some(row.parse(max)?)
                    };
                }
                Ok((row.material("endgame")?, d))
            })
        };
        let impact = read_csv(TABLE5.0, TABLE5.1, |row| {
            let winner = row.result("result")?;
            let side = |stm: Half| -> Result<Impact, PaperError> {
                let s = stm.name();
                Ok(Impact {
                    extra_draws: row.number(&format!("extra_draws_{s}"))?,
                    delayed: row.number(&format!("delayed_{s}"))?,
                    pct_extra_draws: row.get(&format!("pct_extra_draws_{s}"))?,
                    pct_delayed: row.get(&format!("pct_delayed_{s}"))?,
                })
            };
            Ok((
                row.material("endgame")?,
                winner,
                [side(Half::Wtm)?, side(Half::Btm)?],
            ))
        })?;
        let examples = read_csv(TABLE6.0, TABLE6.1, |row| {
            let dtz50 = row.get("dtz50_plies")?;
            Ok(Example {
                key: row.get("key")?,
                material: row.material("endgame")?,
                winner: row.result("result")?,
                fen: row.get("fen")?,
                dtm: row.number("dtm_plies")?,
                dtz: row.number("dtz_plies")?,
                dtz50: if dtz50.is_empty() {
                    None
                } else {
                    Some(row.parse(dtz50)?)
                },
            })
        })?;
        Ok(Paper {
            dtz: depths(TABLE3)?,
            dtz50: depths(TABLE4)?,
            impact,
            examples,
        })
    }

    /// The endgames of Table 3, in its order.
    fn endgames(&self) -> impl Iterator<Item = Material> + '_ {
        self.dtz.iter().map(|r| r.0)
    }

    fn covers(&self, m: &Material) -> bool {
        self.endgames().any(|e| e == m.canonical().0)
    }

    /// Every figure of Tables 3-6 for the endgame of `tables`: one scan of its DTZ and DTZ50
    /// files, then a probe of each example.
    pub fn compare(&self, tables: &EndgameTables) -> Result<Vec<Figure>, PaperError> {
        // Six-man tables store both sides (`generate`): no sub-endgame is read.
        let stats = scan(tables, &[]).ok_or_else(|| {
            PaperError::Table(TableError::BadInput(format!(
                "{}: DTZ for one side to move needs the sub-endgames",
                tables.material()
            )))
        })?;
        let mut figures = self.depth_figures(&stats)?;
        figures.extend(self.example_figures(tables)?);
        Ok(figures)
    }

    /// The figures of Tables 3, 4 and 5 beside those of `stats`.
    fn depth_figures(&self, stats: &EndgameStats) -> Result<Vec<Figure>, PaperError> {
        let m = stats.material;
        let find = |t: &[(Material, Depths)]| t.iter().find(|r| r.0 == m).map(|r| r.1);
        let table3 = find(&self.dtz).ok_or(PaperError::NotInPaper(m))?;
        let (table4, table4_note) = match find(&self.dtz50) {
            Some(d) => (d, None),
            None => (
                table3,
                Some("no Table 4 row (the rule changes nothing here): Table 3's"),
            ),
        };
        let mut out = Vec::new();
        for (k, &(winner, stm)) in COLUMNS.iter().enumerate() {
            let ours = stats.get(stm, winner);
            let head = format!("{} {}", result_name(winner), stm.name());
            let deepest = [
                (3, "DTZ", table3, ours.max_dtz, None),
                (4, "DTZ50", table4, ours.max_dtz50, table4_note),
            ];
            for (table, metric, paper, ours, note) in deepest {
                out.extend(deepest_figures(
                    table,
                    &format!("{head} max {metric}"),
                    (paper.max_moves[k], paper.at_max[k]),
                    ours,
                    note,
                ));
            }
        }
        for (winner, stm) in COLUMNS {
            let (paper, note) = self.impact(m, winner, stm);
            let ours = stats.get(stm, winner);
            out.extend(impact_figures(
                &format!("{} {}", result_name(winner), stm.name()),
                &paper,
                ours,
                note,
            ));
        }
        Ok(out)
    }

    /// Table 5 for `m`, `winner`, `stm`: its row, the mirror of the other result's row in an
    /// endgame with the same men on both sides (the paper lists those for 1-0 only), or none
    /// without a row (the rule changes nothing).
    fn impact(&self, m: Material, winner: Color, stm: Half) -> (Impact, Option<&'static str>) {
        let row = |w: Color| {
            self.impact
                .iter()
                .find(|r| r.0 == m && r.1 == w)
                .map(|r| r.2)
        };
        let other = |h: Half| match h {
            Half::Wtm => Half::Btm,
            Half::Btm => Half::Wtm,
        };
        if let Some(r) = row(winner) {
            (r[stm as usize], None)
        } else if let Some(r) = row(!winner).filter(|_| m.is_symmetric()) {
            (
                r[other(stm) as usize],
                Some("the mirror of the other result's Table 5 row"),
            )
        } else {
            let none = Impact {
                extra_draws: 0,
                delayed: 0,
                pct_extra_draws: "0",
                pct_delayed: "0",
            };
            (none, Some("no Table 5 row: the rule draws or delays none"))
        }
    }

    /// Table 6's positions of `material` (the paper's name for each, its FEN): the starts of
    /// the play-out benchmark.
    pub fn example_positions(&self, material: &Material) -> Vec<(&'static str, &'static str)> {
        self.examples
            .iter()
            .filter(|e| e.material == *material)
            .map(|e| (e.key, e.fen))
            .collect()
    }

    /// The Table 6 examples of the endgame of `tables`, probed: result, DTM, DTZ and DTZ50 in
    /// plies (DTM from the files' winner's moves: a win in k moves is 2k - 1 plies, a loss in
    /// k moves 2k).
    fn example_figures(&self, tables: &EndgameTables) -> Result<Vec<Figure>, PaperError> {
        let mut out = Vec::new();
        for ex in self
            .examples
            .iter()
            .filter(|e| e.material == tables.material())
        {
            let fail = |what: String| PaperError::Example { key: ex.key, what };
            let pos = Position::from_fen(ex.fen).map_err(|e| fail(e.to_string()))?;
            let [dtm, dtz, dtz50] = tables.probe(&tb_position(&pos)).ok_or_else(|| {
                fail(format!(
                    "{} is not a position of {}",
                    ex.fen,
                    tables.material()
                ))
            })?;
            let stm = pos.side_to_move();
            let result = match dtm.outcome() {
                Outcome::Win(_) => result_name(stm),
                Outcome::Loss(_) => result_name(!stm),
                _ => "draw",
            };
            let dtm_plies = match dtm.outcome() {
                Outcome::Win(k) => Some(2 * k - 1),
                Outcome::Loss(k) => Some(2 * k),
                _ => None,
            };
            let figure = |what: &str, paper: Option<u16>, ours: Option<u16>| Figure {
                table: 6,
                what: format!("{} {what}", ex.key),
                paper: show(paper),
                ours: show(ours),
                equal: paper == ours,
                note: None,
            };
            out.push(Figure {
                table: 6,
                what: format!("{} result", ex.key),
                paper: result_name(ex.winner).to_string(),
                ours: result.to_string(),
                equal: result == result_name(ex.winner),
                note: Some(ex.fen.to_string()),
            });
            out.push(figure("DTM (plies)", Some(ex.dtm), dtm_plies));
            out.push(figure("DTZ (plies)", Some(ex.dtz), plies(dtz)));
            let mut z50 = figure("DTZ50 (plies)", ex.dtz50, plies(dtz50));
            if ex.dtz50.is_none() {
                z50.note = Some("'-': a draw under the 50-move rule".to_string());
            }
            out.push(z50);
        }
        Ok(out)
    }
}

/// Compares every endgame of the paper whose three tables are in `dir`, or only `only`, and
/// tells `each` what became of each as it goes (a six-man scan takes minutes). Endgames with
/// none of their files present are passed over; six-man endgames the paper does not cover are
/// named last.
pub fn compare_dir(
    paper: &Paper,
    dir: &Path,
    only: Option<&Material>,
    each: &mut dyn FnMut(Checked),
) -> Result<(), PaperError> {
    if !dir.is_dir() {
        return Err(PaperError::NoDirectory(dir.to_path_buf()));
    }
    let missing = |m: &Material| -> Vec<Metric> {
        Metric::ALL
            .into_iter()
            .filter(|&metric| !dir.join(file_name(m, metric)).exists())
            .collect()
    };
    let endgames: Vec<Material> = match only {
        Some(m) if !paper.covers(m) => return Err(PaperError::NotInPaper(m.canonical().0)),
        Some(m) => vec![m.canonical().0],
        None => paper.endgames().collect(),
    };
    for material in endgames {
        let missing = missing(&material);
        if missing.len() == Metric::ALL.len() && only.is_none() {
            continue;
        }
        if !missing.is_empty() {
            each(Checked::Incomplete { material, missing });
            continue;
        }
        let start = Instant::now();
        let compared = EndgameTables::open(dir, &material)
            .and_then(|t| check_entries(dir, &t).map(|()| t))
            .map_err(PaperError::from)
            .and_then(|t| paper.compare(&t));
        each(match compared {
            Ok(figures) => Checked::Compared {
                material,
                figures,
                seconds: start.elapsed().as_secs_f64(),
            },
            Err(error) => Checked::Failed { material, error },
        });
    }
    if only.is_none() {
        for m in Material::all_up_to(6) {
            if m.men() == 6 && !paper.covers(&m) && missing(&m).is_empty() {
                each(Checked::NotInPaper(m));
            }
        }
    }
    Ok(())
}

/// Do the files of `t` (in `dir`) hold exactly the halves and entries of the index? A file of
/// another index would be read out of range.
fn check_entries(dir: &Path, t: &EndgameTables) -> Result<(), TableError> {
    let index = t.index();
    for metric in Metric::ALL {
        for &h in index.stored_halves() {
            let entries = t.header(metric).entries[h as usize];
            if entries != Some(index.size(h)) {
                return Err(TableError::Corrupt {
                    path: dir.join(file_name(&t.material(), metric)),
                    what: format!(
                        "half {} has {entries:?} entries, the index {}",
                        h.name(),
                        index.size(h)
                    ),
                });
            }
        }
    }
    Ok(())
}

/// The deepest-win figures of Table 3 or 4 for one column: the depth in moves, and the
/// positions at it.
fn deepest_figures(
    table: u8,
    what: &str,
    (max_moves, at_max): (Option<u16>, u64),
    ours: Option<Deepest>,
    note: Option<&str>,
) -> [Figure; 2] {
    let our_moves = ours.map(|d| d.moves);
    let our_count = ours.map_or(0, |d| d.positions);
    let plies = ours.map(|d| format!("{} plies", d.plies));
    [
        Figure {
            table,
            what: format!("{what} (moves)"),
            paper: show(max_moves),
            ours: show(our_moves),
            equal: max_moves == our_moves,
            note: join(note, plies.as_deref()),
        },
        Figure {
            table,
            what: format!("{what}: positions"),
            paper: at_max.to_string(),
            ours: our_count.to_string(),
            equal: at_max == our_count,
            note: note.map(str::to_string),
        },
    ]
}

/// The Table 5 figures of one result and side to move: extra draws and delayed wins, counts
/// and percentages of the nominal wins.
fn impact_figures(head: &str, paper: &Impact, ours: &WinStats, note: Option<&str>) -> [Figure; 4] {
    let of_wins = format!("of {} nominal wins", ours.wins);
    let count = |what: &str, paper: u64, ours: u64| Figure {
        table: 5,
        what: format!("{head} {what}"),
        paper: paper.to_string(),
        ours: ours.to_string(),
        equal: paper == ours,
        note: note.map(str::to_string),
    };
    let percent = |what: &str, paper: &str, count: u64| Figure {
        table: 5,
        what: format!("{head} {what} (%)"),
        paper: paper.to_string(),
        ours: percent_of(count, ours.wins),
        equal: percent_matches(paper, count, ours.wins),
        note: join(note, Some(&of_wins)),
    };
    [
        count("extra draws", paper.extra_draws, ours.drawn_by_rule50),
        percent("extra draws", paper.pct_extra_draws, ours.drawn_by_rule50),
        count("delayed wins", paper.delayed, ours.delayed_by_rule50),
        percent("delayed wins", paper.pct_delayed, ours.delayed_by_rule50),
    ]
}

/// `count` as a percentage of `wins`, to three decimals ("-" without wins).
fn percent_of(count: u64, wins: u64) -> String {
    match (count, wins) {
        (_, 0) => "-".to_string(),
        (0, _) => "0".to_string(),
        _ => format!("{:.3}", 100.0 * count as f64 / wins as f64),
    }
}

/// Does `count` of `wins` print as the paper's `printed` percentage: `0` for none, `eps` for
/// above 0 and below 0.005, otherwise within rounding to two decimals?
fn percent_matches(printed: &str, count: u64, wins: u64) -> bool {
    let pct = 100.0 * count as f64 / wins.max(1) as f64;
    match printed {
        "0" => count == 0,
        "eps" => count > 0 && pct < 0.005,
        p => p
            .parse::<f64>()
            .is_ok_and(|p| wins > 0 && (pct - p).abs() <= 0.005 + 1e-9),
    }
}

fn join(a: Option<&str>, b: Option<&str>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b).map(str::to_string),
    }
}

/// A depth, or "-" for none (the paper's '—').
fn show(v: Option<u16>) -> String {
    v.map_or("-".to_string(), |n| n.to_string())
}

/// The depth of a DTZ or DTZ50 value in plies (None for a draw).
fn plies(v: TbValue) -> Option<u16> {
    match v.outcome() {
        Outcome::Win(n) | Outcome::Loss(n) => Some(n),
        _ => None,
    }
}

fn result_name(winner: Color) -> &'static str {
    match winner {
        Color::White => "1-0",
        Color::Black => "0-1",
    }
}

fn column_name(winner: Color, stm: Half) -> String {
    let side = match winner {
        Color::White => "white",
        Color::Black => "black",
    };
    format!("{side}_wins_{}", stm.name())
}

/// One row of a transcribed table, its fields found by column name.
struct Row<'a> {
    file: &'static str,
    line: usize,
    header: &'a [&'static str],
    fields: Vec<&'static str>,
}

impl Row<'_> {
    fn error(&self, what: String) -> PaperError {
        PaperError::Data {
            file: self.file,
            line: self.line,
            what,
        }
    }

    fn get(&self, column: &str) -> Result<&'static str, PaperError> {
        let at = self.header.iter().position(|&c| c == column);
        at.and_then(|i| self.fields.get(i).copied())
            .ok_or_else(|| self.error(format!("no column '{column}'")))
    }

    fn parse<T: FromStr>(&self, field: &str) -> Result<T, PaperError> {
        field
            .trim()
            .parse()
            .map_err(|_| self.error(format!("'{field}' is not a number")))
    }

    fn number<T: FromStr>(&self, column: &str) -> Result<T, PaperError> {
        self.parse(self.get(column)?)
    }

    /// An endgame name, which must be in the stored colouring (White the side named first).
    fn material(&self, column: &str) -> Result<Material, PaperError> {
        let name = self.get(column)?;
        let m = Material::parse(name).map_err(|e| self.error(e.to_string()))?;
        if !m.is_canonical() {
            return Err(self.error(format!("{name} is not in the stored colouring")));
        }
        Ok(m)
    }

    fn result(&self, column: &str) -> Result<Color, PaperError> {
        match self.get(column)? {
            "1-0" => Ok(Color::White),
            "0-1" => Ok(Color::Black),
            r => Err(self.error(format!("result '{r}' is neither 1-0 nor 0-1"))),
        }
    }
}

/// The rows of a CSV text with a header line, each read by `f`. Only a table's last column
/// may hold commas (Table 6's notes), so splitting at the first commas is enough.
fn read_csv<T>(
    file: &'static str,
    text: &'static str,
    mut f: impl FnMut(&Row) -> Result<T, PaperError>,
) -> Result<Vec<T>, PaperError> {
    let mut lines = text.lines();
    let header: Vec<&'static str> = lines.next().unwrap_or_default().split(',').collect();
    lines
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            f(&Row {
                file,
                line: i + 2,
                header: &header,
                fields: l.splitn(header.len(), ',').collect(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transcribed_tables_read() {
        let paper = Paper::load().expect("the tables read");
        assert_eq!(paper.dtz.len(), 135);
        assert_eq!(paper.dtz50.len(), 63);
        assert_eq!(paper.impact.len(), 69);
        assert_eq!(paper.examples.len(), 69);
        for m in paper.endgames() {
            assert_eq!(m.men(), 6);
            assert!(!m.has_pawns());
        }
        // Every example is a position of its endgame, in a table of the paper.
        for ex in &paper.examples {
            let pos = Position::from_fen(ex.fen).expect(ex.key);
            assert_eq!(
                crate::egtb::play::probe::position_material(&pos)
                    .canonical()
                    .0,
                ex.material,
                "{}",
                ex.key
            );
            assert!(paper.covers(&ex.material), "{}", ex.key);
        }
    }

    /// Figures of an endgame that say what the paper says: Tables 3 and 4 (a win of k moves
    /// taken as 2k - 1 plies) and the counts of Table 5; a billion nominal wins.
    fn as_printed(paper: &Paper, m: Material) -> EndgameStats {
        let find = |t: &[(Material, Depths)]| t.iter().find(|r| r.0 == m).map(|r| r.1);
        let table3 = find(&paper.dtz).expect("in Table 3");
        let table4 = find(&paper.dtz50).unwrap_or(table3);
        let deepest = |d: Depths, k: usize| {
            d.max_moves[k].map(|moves| Deepest {
                moves,
                positions: d.at_max[k],
                plies: 2 * moves - 1,
            })
        };
        let mut by = [[WinStats::default(); 2]; 2];
        for (k, &(winner, stm)) in COLUMNS.iter().enumerate() {
            let (impact, _) = paper.impact(m, winner, stm);
            by[stm as usize][winner.index()] = WinStats {
                wins: 1_000_000_000,
                max_dtz: deepest(table3, k),
                max_dtz50: deepest(table4, k),
                drawn_by_rule50: impact.extra_draws,
                delayed_by_rule50: impact.delayed,
            };
        }
        EndgameStats { material: m, by }
    }

    /// Each column of the paper is compared with the right side to move and winner: the
    /// paper's own figures are all equal, and one changed figure is the one DIFFERENT.
    #[test]
    fn each_figure_meets_its_column() {
        let paper = Paper::load().unwrap();
        // Symmetric and in Tables 4 and 5; in both for 1-0 only; in Table 3 only.
        for name in ["KQRKQR", "KBBKBN", "KBBKBB"] {
            let m = Material::parse(name).unwrap();
            let mut stats = as_printed(&paper, m);
            let figures = paper.depth_figures(&stats).unwrap();
            assert_eq!(figures.len(), 4 * 8, "{name}");
            let counts = figures.iter().filter(|f| !f.what.ends_with("(%)"));
            assert!(counts.clone().all(|f| f.equal), "{name}: {figures:#?}");
            let at_max = &mut stats.by[Half::Btm as usize][Color::Black.index()];
            at_max.max_dtz.as_mut().unwrap().positions += 1;
            let figures = paper.depth_figures(&stats).unwrap();
            let different: Vec<&Figure> = figures
                .iter()
                .filter(|f| !f.what.ends_with("(%)") && !f.equal)
                .collect();
            assert_eq!(different.len(), 1, "{name}");
            assert_eq!(different[0].table, 3);
            assert_eq!(different[0].what, "0-1 btm max DTZ: positions");
        }
    }

    #[test]
    fn percentages_compare_as_printed() {
        assert!(percent_matches("0", 0, 1000));
        assert!(!percent_matches("0", 1, 1000));
        assert!(percent_matches("eps", 4, 100_000));
        assert!(!percent_matches("eps", 5, 100_000));
        assert!(!percent_matches("eps", 0, 100_000));
        assert!(percent_matches("47.03", 4703, 10_000));
        assert!(percent_matches("47.03", 47_034, 100_000));
        assert!(!percent_matches("47.03", 47_040, 100_000));
        assert!(!percent_matches("47.03", 0, 0));
    }

    /// Symmetric endgames are listed in Table 5 for 1-0 only: 0-1 with White to move is 1-0
    /// with Black to move.
    #[test]
    fn a_symmetric_endgame_mirrors_its_table5_row() {
        let paper = Paper::load().unwrap();
        let m = Material::parse("KQRKQR").unwrap();
        let (white, _) = paper.impact(m, Color::White, Half::Btm);
        let (black, note) = paper.impact(m, Color::Black, Half::Wtm);
        assert_eq!(white.extra_draws, 12416);
        assert_eq!(black.extra_draws, 12416);
        assert!(note.is_some());
        let (none, _) = paper.impact(Material::parse("KBBKBN").unwrap(), Color::Black, Half::Wtm);
        assert_eq!((none.extra_draws, none.delayed), (0, 0));
    }
}
