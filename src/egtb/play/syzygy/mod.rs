//! Syzygy tables (`.rtbw` win/draw/loss, `.rtbz` distance to zeroing), which most users already
//! own, probed through the `pyrrhic-rs` crate: a Rust translation of the Fathom/Pyrrhic prober
//! that reads the board through an adapter to our own attack tables, so a probe converts
//! nothing but eight bitboards, and MIT-licensed as this project is. (`shakmaty-syzygy` is
//! better kept but GPL-3.0, which an MIT engine cannot link, and it takes only its own position
//! type; building the C Fathom prober would put C sources in the tree.) Fortress's own tables
//! come first wherever they cover a position (they carry DTM, which SZ°Z50Z needs); these cover
//! the rest.
//!
//! What Syzygy gives, and how the search uses it:
//! * WDL with the 50-move rule folded in (cursed wins, blessed losses), exact only right after a
//!   zeroing move: the search probes it at nodes whose half-move counter is 0.
//! * DTZ at the root, judged with the game's real counter: `root_moves` keeps the moves that
//!   preserve the root's result under the rule; the search chooses among them. Every kept
//!   winning move still wins before a claim, so the kept set narrows as the counter rises and the
//!   win is converted.
//!
//! The prober keeps its tables in process-wide state, so one set of directories is open per
//! process (`open` shares it between sessions asking for the same directories).

mod checksum;

use crate::chess::attacks;
use crate::chess::{legal_moves, Bitboard, Color, Move, PieceType, Position, Square};
use crate::egtb::format::Wdl5;
use pyrrhic_rs::{DtzProbeValue, EngineAdapter, TableBases, WdlProbeResult};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// A Syzygy probe's result: Syzygy's five values are those of Fortress's WDL files.
fn wdl_of(r: WdlProbeResult) -> Wdl5 {
    match r {
        WdlProbeResult::Loss => Wdl5::Loss,
        WdlProbeResult::BlessedLoss => Wdl5::BlessedLoss,
        WdlProbeResult::Draw => Wdl5::Draw,
        WdlProbeResult::CursedWin => Wdl5::CursedWin,
        WdlProbeResult::Win => Wdl5::Win,
    }
}

/// The prober's view of the board: our attack tables. Its squares are ours (a1 = 0, h8 = 63).
#[derive(Clone)]
struct Attacks;

impl EngineAdapter for Attacks {
    fn pawn_attacks(color: pyrrhic_rs::Color, square: u64) -> u64 {
        let c = match color {
            pyrrhic_rs::Color::White => Color::White,
            pyrrhic_rs::Color::Black => Color::Black,
        };
        attacks::pawn_attacks(c, Square(square as u8)).0
    }
    fn knight_attacks(square: u64) -> u64 {
        attacks::knight_attacks(Square(square as u8)).0
    }
    fn bishop_attacks(square: u64, occupied: u64) -> u64 {
        attacks::bishop_attacks(Square(square as u8), Bitboard(occupied)).0
    }
    fn rook_attacks(square: u64, occupied: u64) -> u64 {
        attacks::rook_attacks(Square(square as u8), Bitboard(occupied)).0
    }
    fn queen_attacks(square: u64, occupied: u64) -> u64 {
        attacks::queen_attacks(Square(square as u8), Bitboard(occupied)).0
    }
    fn king_attacks(square: u64) -> u64 {
        attacks::king_attacks(Square(square as u8)).0
    }
}

/// The board as the prober takes it: the colours, the kinds, the e.p. square (0: none).
struct Board {
    white: u64,
    black: u64,
    kings: u64,
    queens: u64,
    rooks: u64,
    bishops: u64,
    knights: u64,
    pawns: u64,
    ep: u32,
    white_to_move: bool,
}

/// One root move as Syzygy judges it: its result under the 50-move rule with the game's counter,
/// and the plies from the root to the next zeroing move (or mate) with best play.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RootMoveValue {
    pub mv: Move,
    pub wdl: Wdl5,
    pub dtz: u16,
}

/// The open Syzygy tables.
pub struct Syzygy {
    tables: TableBases<Attacks>,
    dirs: Vec<PathBuf>,
    max_men: u8,
    wdl_files: usize,
    dtz_files: usize,
    left_out: Vec<String>,
    /// Where files are left out, the directory the prober reads instead (`View`).
    _view: Option<View>,
}

/// A private directory of links to the sound files of a path, for the prober to read when some
/// of the path's files are left out; removed when the tables are let go.
struct View {
    dir: PathBuf,
}

impl View {
    fn of<'a>(files: impl Iterator<Item = (&'a String, &'a PathBuf)>) -> std::io::Result<View> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "fortress-syzygy-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let view = View { dir };
        for (name, path) in files {
            link(&std::path::absolute(path)?, &view.dir.join(name))?;
        }
        Ok(view)
    }
}

#[cfg(unix)]
fn link(target: &std::path::Path, at: &std::path::Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, at)
}

#[cfg(windows)]
fn link(target: &std::path::Path, at: &std::path::Path) -> std::io::Result<()> {
    std::os::windows::fs::symlink_file(target, at)
}

impl Drop for View {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The tables open in this process, if any (the prober allows one set).
static OPEN: Mutex<Weak<Syzygy>> = Mutex::new(Weak::new());

/// The directories of a `SyzygyPath` value, separated as the platform separates paths (`:` on
/// Unix, `;` on Windows); empty parts and `<empty>` are dropped.
pub fn split_path(value: &str) -> Vec<PathBuf> {
    let value = value.trim();
    if value.is_empty() || value == "<empty>" {
        return Vec::new();
    }
    std::env::split_paths(value)
        .filter(|p| !p.as_os_str().is_empty())
        .collect()
}

/// The number of men of a Syzygy file name such as `KRBvKN.rtbw` (kings counted), if it is one.
fn men_of_file(name: &str, suffix: &str) -> Option<u8> {
    let stem = name.strip_suffix(suffix)?;
    let (white, black) = stem.split_once('v')?;
    let valid = |s: &str| s.starts_with('K') && s.chars().all(|c| "KQRBNP".contains(c));
    (valid(white) && valid(black)).then_some((white.len() + black.len()) as u8)
}

impl Syzygy {
    /// Opens the tables in `dirs`. Directories that do not exist are refused by name; a path
    /// with no table at all is an error rather than an empty set. When tables of the same
    /// directories are already open in this process they are shared; other directories can be
    /// opened only once every holder of the first has let go.
    pub fn open(dirs: &[PathBuf]) -> Result<Arc<Syzygy>, String> {
        for d in dirs {
            if !d.is_dir() {
                return Err(format!("{} is not a directory", d.display()));
            }
            // The prober splits its path at ':' on every platform.
            if d.to_string_lossy().contains(':') {
                return Err(format!(
                    "{}: a directory whose name holds ':' (a drive letter, say) cannot be \
                     given to the prober; give a path without one",
                    d.display()
                ));
            }
        }
        // An endgame found in two directories is counted once: the prober takes the first.
        let mut found = BTreeMap::new();
        for d in dirs {
            let names = std::fs::read_dir(d)
                .map_err(|e| format!("{}: {e}", d.display()))?
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok());
            for name in names {
                if men_of_file(&name, ".rtbw").is_some() || men_of_file(&name, ".rtbz").is_some() {
                    found.entry(name.clone()).or_insert_with(|| d.join(&name));
                }
            }
        }
        if !found.keys().any(|n| n.ends_with(".rtbw")) {
            let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
            return Err(format!("no Syzygy tables (.rtbw) in {}", shown.join(", ")));
        }
        let mut left_out = Vec::new();
        found.retain(|name, path| match checksum::verify_remembered(path) {
            Ok(()) => true,
            Err(damage) => {
                left_out.push(format!("Syzygy: {name} left out: {damage}"));
                false
            }
        });
        let count = |suffix| found.keys().filter(|n| n.ends_with(suffix)).count();
        let (wdl_files, dtz_files) = (count(".rtbw"), count(".rtbz"));
        if wdl_files == 0 {
            return Err(format!(
                "no sound Syzygy table (.rtbw): {}",
                left_out.join("; ")
            ));
        }
        let max_men = found
            .keys()
            .filter_map(|n| men_of_file(n, ".rtbw"))
            .max()
            .unwrap_or(0);
        let mut open = OPEN.lock().expect("syzygy lock");
        if let Some(live) = open.upgrade() {
            if live.dirs == dirs {
                return Ok(live);
            }
            return Err("other Syzygy tables are still in use in this process".to_string());
        }
        // The prober reads whole directories: where a file is left out, it is shown a
        // directory of links to the sound files alone.
        let view = if left_out.is_empty() {
            None
        } else {
            Some(View::of(found.iter()).map_err(|e| {
                format!(
                    "{}; the sound files cannot be set apart from them ({e})",
                    left_out.join("; ")
                )
            })?)
        };
        let prober_dirs: Vec<String> = match &view {
            Some(v) => vec![v.dir.display().to_string()],
            None => dirs.iter().map(|d| d.display().to_string()).collect(),
        };
        let tables = TableBases::<Attacks>::new(prober_dirs.join(":"))
            .map_err(|e| format!("the Syzygy prober refused the tables: {e:?}"))?;
        let max_men = max_men.min(tables.max_pieces() as u8);
        let s = Arc::new(Syzygy {
            tables,
            dirs: dirs.to_vec(),
            max_men,
            wdl_files,
            dtz_files,
            left_out,
            _view: view,
        });
        *open = Arc::downgrade(&s);
        Ok(s)
    }

    /// One line for each file left out, and why.
    pub fn left_out(&self) -> &[String] {
        &self.left_out
    }

    /// The largest number of men (kings counted) of the tables found.
    pub fn max_men(&self) -> u8 {
        self.max_men
    }

    /// What was found, for an `info string` line.
    pub fn describe(&self) -> String {
        let dirs: Vec<String> = self.dirs.iter().map(|d| d.display().to_string()).collect();
        format!(
            "Syzygy: {} WDL and {} DTZ tables, up to {} men, in {}",
            self.wdl_files,
            self.dtz_files,
            self.max_men,
            dirs.join(", ")
        )
    }

    /// The directories the tables were opened from.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// `pos` as the prober takes it, if the tables may cover it (men, no castling rights).
    #[inline]
    fn board(&self, pos: &Position) -> Option<Board> {
        if pos.men() > self.max_men as u32 || pos.castling_rights() != 0 {
            return None;
        }
        let k = |kind| pos.kind_bb(kind).0;
        Some(Board {
            white: pos.color_bb(Color::White).0,
            black: pos.color_bb(Color::Black).0,
            kings: k(PieceType::King),
            queens: k(PieceType::Queen),
            rooks: k(PieceType::Rook),
            bishops: k(PieceType::Bishop),
            knights: k(PieceType::Knight),
            pawns: k(PieceType::Pawn),
            ep: pos.ep_square().map_or(0, |s| s.0 as u32),
            white_to_move: pos.side_to_move() == Color::White,
        })
    }

    /// Win, draw or loss of `pos` for its side to move with the 50-move rule from a fresh
    /// counter. None when no table covers it (too many men, castling rights, a missing file).
    /// The answer ignores the counter of `pos`: exact only where that counter is 0.
    #[inline]
    pub fn wdl(&self, pos: &Position) -> Option<Wdl5> {
        let b = self.board(pos)?;
        let (w, bl, ep, stm) = (b.white, b.black, b.ep, b.white_to_move);
        let r = self.tables.probe_wdl(
            w, bl, b.kings, b.queens, b.rooks, b.bishops, b.knights, b.pawns, ep, stm,
        );
        r.ok().map(wdl_of)
    }

    /// Every legal move of `pos` judged by DTZ with the game's half-move counter (None when the
    /// tables do not cover `pos` or it has no legal move). Not for the hot path: it allocates,
    /// and the prober's root probe must not run beside other probes of this process.
    pub fn root(&self, pos: &Position) -> Option<Vec<RootMoveValue>> {
        let b = self.board(pos)?;
        let (w, bl, ep, stm) = (b.white, b.black, b.ep, b.white_to_move);
        let clock = u32::from(pos.halfmove_clock().min(255));
        let r = self.tables.probe_root(
            w, bl, b.kings, b.queens, b.rooks, b.bishops, b.knights, b.pawns, clock, ep, stm,
        );
        let r = r.ok()?;
        let legal = legal_moves(pos);
        let mut out = Vec::with_capacity(r.num_moves);
        for v in &r.moves[..r.num_moves] {
            let DtzProbeValue::DtzResult(d) = v else {
                return None;
            };
            let promotion = match d.promotion {
                pyrrhic_rs::Piece::Queen => Some(PieceType::Queen),
                pyrrhic_rs::Piece::Rook => Some(PieceType::Rook),
                pyrrhic_rs::Piece::Bishop => Some(PieceType::Bishop),
                pyrrhic_rs::Piece::Knight => Some(PieceType::Knight),
                _ => None,
            };
            let mv = legal.iter().find(|m| {
                m.from().0 == d.from_square
                    && m.to().0 == d.to_square
                    && m.promotion_piece() == promotion
            })?;
            out.push(RootMoveValue {
                mv,
                wdl: wdl_of(d.wdl),
                dtz: d.dtz,
            });
        }
        // Every legal move judged, or none: a partial answer would hide moves from the search.
        (out.len() == legal.len() && !out.is_empty()).then_some(out)
    }
}

/// The root moves to search, from Syzygy's judgement of each (`Syzygy::root`), and the result
/// they keep: the moves of the best result; among wins, with `rule50`, every move that still
/// wins before a claim (each keeps the win, and the set narrows to the fastest as the counter
/// rises); without the rule, a cursed win is a win and a blessed loss a loss, and the winning
/// moves kept are those that zero within the counter's reach or else the fastest; when lost,
/// the moves that put the opponent's zeroing move furthest away. Once a position has repeated
/// since the last zeroing move (`repeated`), a win keeps only its fastest moves: the search,
/// free to choose among equal wins, could otherwise go round until a repetition draws.
pub fn root_moves(
    values: &[RootMoveValue],
    halfmove: u16,
    rule50: bool,
    repeated: bool,
) -> (Wdl5, Vec<Move>) {
    let class = |w: Wdl5| if rule50 { w } else { w.without_rule() };
    let best = values
        .iter()
        .map(|v| class(v.wdl))
        .max()
        .unwrap_or(Wdl5::Draw);
    let of_best = || values.iter().filter(move |v| class(v.wdl) == best);
    let keep: Vec<Move> = match best {
        Wdl5::Win if repeated => {
            let fastest = of_best().map(|v| v.dtz).min().unwrap_or(0);
            of_best()
                .filter(|v| v.dtz == fastest)
                .map(|v| v.mv)
                .collect()
        }
        Wdl5::Win if !rule50 => {
            let fastest = of_best().map(|v| v.dtz).min().unwrap_or(0);
            let reach = 100u16.saturating_sub(halfmove).max(fastest);
            of_best().filter(|v| v.dtz <= reach).map(|v| v.mv).collect()
        }
        Wdl5::Loss | Wdl5::BlessedLoss => {
            let slowest = of_best().map(|v| v.dtz).max().unwrap_or(0);
            of_best()
                .filter(|v| v.dtz == slowest)
                .map(|v| v.mv)
                .collect()
        }
        _ => of_best().map(|v| v.mv).collect(),
    };
    (best, keep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_give_their_men() {
        assert_eq!(men_of_file("KRBvKN.rtbw", ".rtbw"), Some(5));
        assert_eq!(men_of_file("KBBvKNN.rtbz", ".rtbz"), Some(6));
        assert_eq!(men_of_file("KvK.rtbw", ".rtbw"), Some(2));
        assert_eq!(men_of_file("KRBvKN.rtbz", ".rtbw"), None);
        assert_eq!(men_of_file("README.rtbw", ".rtbw"), None);
        assert_eq!(men_of_file("KXvK.rtbw", ".rtbw"), None);
    }

    #[test]
    fn paths_split_as_the_platform_splits_them() {
        assert!(split_path("").is_empty());
        assert!(split_path("<empty>").is_empty());
        #[cfg(unix)]
        assert_eq!(
            split_path("/a/b::/c"),
            vec![PathBuf::from("/a/b"), PathBuf::from("/c")]
        );
    }

    #[test]
    fn a_path_without_tables_is_refused_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let err = Syzygy::open(&[dir.path().to_path_buf()]).err().unwrap();
        assert!(err.contains("no Syzygy tables"), "{err}");
        let missing = dir.path().join("missing");
        let err = Syzygy::open(&[missing]).err().unwrap();
        assert!(err.contains("is not a directory"), "{err}");
    }

    fn mv(s: &str) -> Move {
        let from = Square::parse(&s[..2]).unwrap();
        let to = Square::parse(&s[2..]).unwrap();
        Move::normal(from, to)
    }

    fn value(m: &str, wdl: Wdl5, dtz: u16) -> RootMoveValue {
        RootMoveValue {
            mv: mv(m),
            wdl,
            dtz,
        }
    }

    #[test]
    fn the_root_keeps_the_moves_that_keep_the_result() {
        use Wdl5::*;
        let moves = [
            value("a1a2", Win, 9),
            value("a1b2", Win, 31),
            value("a1b1", CursedWin, 120),
            value("b2b3", Draw, 0),
            value("b3b4", Loss, 12),
        ];
        // Under the rule every move that still wins before a claim is kept.
        assert_eq!(
            root_moves(&moves, 0, true, false),
            (Win, vec![mv("a1a2"), mv("a1b2")])
        );
        // Without it the cursed win is a win, but too slow to be kept while a faster one zeroes
        // within reach.
        assert_eq!(
            root_moves(&moves, 0, false, false),
            (Win, vec![mv("a1a2"), mv("a1b2")])
        );
        // After a repetition only the fastest win is kept.
        assert_eq!(root_moves(&moves, 0, true, true), (Win, vec![mv("a1a2")]));
        // Only cursed wins left: a draw under the rule, all kept; without the rule the fastest.
        let cursed = [value("a1a2", CursedWin, 130), value("a1b2", CursedWin, 110)];
        assert_eq!(root_moves(&cursed, 0, true, false).0, CursedWin);
        assert_eq!(root_moves(&cursed, 0, true, false).1.len(), 2);
        assert_eq!(
            root_moves(&cursed, 0, false, false),
            (Win, vec![mv("a1b2")])
        );
        // A drawn root keeps the draws, never the loss.
        let drawn = [value("b2b3", Draw, 0), value("b3b4", Loss, 12)];
        assert_eq!(
            root_moves(&drawn, 50, true, false),
            (Draw, vec![mv("b2b3")])
        );
        // A lost root resists longest.
        let lost = [value("a1a2", Loss, 12), value("a1b2", Loss, 30)];
        assert_eq!(root_moves(&lost, 0, true, false), (Loss, vec![mv("a1b2")]));
    }
}
