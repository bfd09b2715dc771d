//! `engine tbinfo`: prints `egtb::report::info`'s report of an endgame, as text or one JSON object; with
//! `--paper`, the comparison of the six-man tables with the paper instead (`cli::paper`).

use crate::egtb::format::{Metric, ENCODING_WDL5_PACKED};
use crate::egtb::index::Half;
use crate::egtb::report::info::{tbinfo, FileStatus, HalfStats, Report};
use serde::Serialize;
use std::fmt::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct TbinfoArgs {
    /// Endgame name, e.g. KQKR (either colouring); with --paper, the one endgame to compare.
    #[arg(required_unless_present = "paper")]
    pub endgame: Option<String>,
    /// Directory of the table files (default: the engine's table directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also scan the files for win/draw/loss counts and deepest values (every entry is read:
    /// seconds for a 4-man table, a minute or more for a 5-man one).
    #[arg(long)]
    pub stats: bool,
    /// Compare every six-man endgame whose three tables are in the directory with
    /// Bourzutschky, Tamplin, Haworth (2005), Tables 3-6: deepest DTZ and DTZ50 wins and their
    /// positions, the wins the 50-move rule draws or delays, the example positions; each
    /// figure beside the paper's. Scans every entry (minutes per endgame). Exit status 1 if a
    /// figure differs, 2 if something could not be compared.
    #[arg(long, conflicts_with = "stats")]
    pub paper: bool,
}

/// Prints the report and returns the exit status: 0, 1 for a bad endgame name, 2 if a table
/// file is present but refused. With `--paper`, the comparison with the paper (`paper`).
pub fn run(args: &TbinfoArgs) -> ExitCode {
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(crate::egtb::play::probe::default_dir);
    if args.paper {
        return super::paper::run(args.endgame.as_deref(), &dir, args.json);
    }
    let endgame = args
        .endgame
        .as_deref()
        .expect("clap requires it without --paper");
    match tbinfo(endgame, &dir, args.stats) {
        Ok(report) => {
            if args.json {
                println!("{}", to_json(&report));
            } else {
                print!("{}", to_text(&report));
            }
            if report.files_ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            }
        }
        Err(e) => {
            eprintln!("tbinfo: {e}");
            ExitCode::from(1)
        }
    }
}

#[derive(Serialize)]
struct PerHalf<T> {
    wtm: T,
    btm: T,
}

#[derive(Serialize)]
struct FileJson<'a> {
    metric: &'static str,
    file: &'a str,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    header: Option<HeaderJson<'a>>,
}

#[derive(Serialize)]
struct HeaderJson<'a> {
    checksum: &'static str,
    version: u32,
    value_bytes: u8,
    block_size: u32,
    compression: &'static str,
    payload_bytes: u64,
    generator: &'a str,
    created: u64,
    xxh3: String,
}

#[derive(Serialize)]
struct StatsJson {
    wins: u64,
    draws: u64,
    losses: u64,
    broken: u64,
    wins50: Option<u64>,
    losses50: Option<u64>,
    max_dtm_win: Option<u16>,
    max_dtm_loss: Option<u16>,
    max_dtz_win: Option<u16>,
    max_dtz_loss: Option<u16>,
    max_dtz50_win: Option<u16>,
    max_dtz50_loss: Option<u16>,
}

impl From<&HalfStats> for StatsJson {
    fn from(s: &HalfStats) -> StatsJson {
        StatsJson {
            wins: s.wins,
            draws: s.draws,
            losses: s.losses,
            broken: s.broken,
            wins50: s.wins50,
            losses50: s.losses50,
            max_dtm_win: s.max_win[0],
            max_dtm_loss: s.max_loss[0],
            max_dtz_win: s.max_win[1],
            max_dtz_loss: s.max_loss[1],
            max_dtz50_win: s.max_win[2],
            max_dtz50_loss: s.max_loss[2],
        }
    }
}

/// Says in what the `max_*` depths of `stats` count, so that a script need not know the file
/// format to compare them.
#[derive(Serialize)]
struct Units {
    dtm: &'static str,
    dtz: &'static str,
    dtz50: &'static str,
}

#[derive(Serialize)]
struct ReportJson<'a> {
    endgame: String,
    sizes: PerHalf<u64>,
    broken: Option<PerHalf<u64>>,
    files: Vec<FileJson<'a>>,
    stats: Option<PerHalf<StatsJson>>,
    depth_units: Units,
}

/// One JSON object: `{"endgame", "sizes", "broken", "files", "stats", "depth_units"}`.
fn to_json(r: &Report) -> String {
    let files = r
        .files
        .iter()
        .map(|(metric, name, status)| {
            let (status, error, header) = match status {
                FileStatus::Missing => ("missing", None, None),
                FileStatus::Bad(e) => ("error", Some(e.to_string()), None),
                FileStatus::Ok(h) => (
                    "ok",
                    None,
                    Some(HeaderJson {
                        checksum: "ok",
                        version: h.version,
                        value_bytes: h.value_width,
                        block_size: h.block_size,
                        compression: h.compression_name(),
                        payload_bytes: h.payload_len,
                        generator: &h.generator,
                        created: h.created,
                        xxh3: format!("{:016x}", h.payload_hash),
                    }),
                ),
            };
            FileJson {
                metric: metric.name(),
                file: name,
                status,
                error,
                header,
            }
        })
        .collect();
    let json = ReportJson {
        endgame: r.material.to_string(),
        sizes: PerHalf {
            wtm: r.sizes[0],
            btm: r.sizes[1],
        },
        broken: r.broken.map(|[wtm, btm]| PerHalf { wtm, btm }),
        files,
        stats: r.stats.as_ref().map(|s| PerHalf {
            wtm: StatsJson::from(&s[Half::Wtm as usize]),
            btm: StatsJson::from(&s[Half::Btm as usize]),
        }),
        depth_units: Units {
            dtm: "moves",
            dtz: "plies",
            dtz50: "plies",
        },
    };
    serde_json::to_string(&json).expect("plain data serialises")
}

/// The human-readable report.
fn to_text(r: &Report) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "endgame {} ({} men)", r.material, r.material.men());
    for h in Half::BOTH {
        let size = r.sizes[h as usize];
        let broken = match r.broken {
            Some(b) => format!(
                "{:>13} ({:.2}%)",
                b[h as usize],
                100.0 * b[h as usize] as f64 / size.max(1) as f64
            ),
            None => "not counted (--stats counts them)".to_string(),
        };
        let _ = writeln!(o, "  {} index size {size:>13}  broken {broken}", h.name());
    }
    if r.material.is_symmetric() {
        let _ = writeln!(
            o,
            "  (same men on both sides: only btm is stored, wtm is probed with colours flipped)"
        );
    }
    for (metric, name, status) in &r.files {
        let metric = Metric::name(*metric);
        let _ = match status {
            FileStatus::Missing => writeln!(o, "{metric} file {name}: not present"),
            FileStatus::Bad(e) => writeln!(o, "{metric} file {name}: REFUSED: {e}"),
            FileStatus::Ok(h) => writeln!(
                o,
                "{metric} file {name}: format {}, {}{}{}, {}-byte blocks, compression {}, {} bytes stored, generator '{}', created {} (unix), checksum ok ({:016x})",
                h.version,
                if h.is_depth_coded() {
                    "depths (results from the WDL file), "
                } else {
                    ""
                },
                match h.entries {
                    [Some(_), None] if !r.material.is_symmetric() => {
                        "wtm only (btm by one ply), "
                    }
                    [None, Some(_)] if !r.material.is_symmetric() => {
                        "btm only (wtm by one ply), "
                    }
                    _ => "",
                },
                if h.encoding == ENCODING_WDL5_PACKED {
                    "three values per byte".to_string()
                } else {
                    format!("{} byte(s) per value", h.value_width)
                },
                h.block_size,
                h.compression_name(),
                h.payload_len,
                h.generator,
                h.created,
                h.payload_hash
            ),
        };
    }
    if let Some(s) = &r.stats {
        for h in Half::BOTH {
            let st = &s[h as usize];
            let d = |v: Option<u16>| v.map_or("-".to_string(), |n| n.to_string());
            let d50 = |v: Option<u64>| v.map_or("-".to_string(), |n| n.to_string());
            let _ = writeln!(
                o,
                "  {}: wins {} draws {} losses {} broken {}; under the 50-move rule wins {} losses {}; deepest win/loss: DTM {}/{} moves, DTZ {}/{} plies, DTZ50 {}/{} plies",
                h.name(),
                st.wins,
                st.draws,
                st.losses,
                st.broken,
                d50(st.wins50),
                d50(st.losses50),
                d(st.max_win[0]),
                d(st.max_loss[0]),
                d(st.max_win[1]),
                d(st.max_loss[1]),
                d(st.max_win[2]),
                d(st.max_loss[2]),
            );
        }
    } else if r.files.iter().any(|f| matches!(f.2, FileStatus::Ok(_))) {
        let _ = writeln!(
            o,
            "  (--stats scans the files for win/draw/loss counts and depths)"
        );
    }
    o
}
