//! `engine tbinfo`: what the index scheme says of an endgame (sizes and broken entries of both
//! halves, Nalimov et al. 2001 Tables 9-14) and, when its table files are present, their
//! headers, whether their checksums hold, and win/draw/loss counts and deepest values (Table 8).

use super::file::{file_name, Metric, Outcome, TableError, TableFile, TableHeader};
use super::index::{EndgameIndex, Half};
use super::material::{Material, MaterialError};
use std::fmt::Write;
use std::path::Path;

/// Per-half counts from a table file, for the side to move.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HalfStats {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub broken: u64,
    /// Wins and losses that hold under the 50-move rule (from the DTZ50 file; the rest of
    /// `wins` and `losses` are draws under the rule).
    /// None without a DTZ50 file.
    pub wins50: Option<u64>,
    pub losses50: Option<u64>,
    /// Deepest win and loss per metric (index `Metric as usize - 1`), in the files' units: DTM
    /// in the winner's moves, DTZ and DTZ50 in plies. None if the metric's file is absent or the
    /// half has no such outcome.
    pub max_win: [Option<u16>; 3],
    pub max_loss: [Option<u16>; 3],
}

/// One metric's file: missing, unreadable (with the reason), or open.
pub enum FileStatus {
    Missing,
    Bad(TableError),
    Ok(Box<TableHeader>),
}

pub struct Report {
    pub material: Material,
    pub sizes: [u64; 2],
    pub broken: [u64; 2],
    pub files: Vec<(Metric, String, FileStatus)>,
    /// Present when at least one file could be read.
    pub stats: Option<[HalfStats; 2]>,
}

impl Report {
    /// False if some file exists but was refused.
    pub fn files_ok(&self) -> bool {
        !self.files.iter().any(|f| matches!(f.2, FileStatus::Bad(_)))
    }
}

/// Builds the report for `endgame` (any colouring; reported canonically) with files in `dir`.
pub fn tbinfo(endgame: &str, dir: &Path) -> Result<Report, MaterialError> {
    let material = Material::parse(endgame)?.canonical().0;
    let index = EndgameIndex::new(&material);
    let sizes = [index.size(Half::Wtm), index.size(Half::Btm)];
    let broken = [index.count_broken(Half::Wtm), index.count_broken(Half::Btm)];
    let mut files = Vec::new();
    let mut stats: Option<[HalfStats; 2]> = None;
    for metric in Metric::ALL {
        let name = file_name(&material, metric);
        let path = dir.join(&name);
        if !path.exists() {
            files.push((metric, name, FileStatus::Missing));
            continue;
        }
        let table = match TableFile::open_for(&path, &material, metric) {
            Ok(t) => t,
            Err(e) => {
                files.push((metric, name, FileStatus::Bad(e)));
                continue;
            }
        };
        // The file must cover exactly the halves and ranges of the index.
        let mismatch = index.stored_halves().iter().find_map(|&h| {
            (table.entries(h) != Some(index.size(h))).then(|| {
                format!(
                    "half {} has {:?} entries, the index {}",
                    h.name(),
                    table.entries(h),
                    index.size(h)
                )
            })
        });
        if let Some(what) = mismatch {
            let e = TableError::Corrupt { path, what };
            files.push((metric, name, FileStatus::Bad(e)));
            continue;
        }
        let s = stats.get_or_insert_with(Default::default);
        let m = metric as usize - 1;
        let count_outcomes = m == 0
            || s.iter()
                .all(|h| h.wins + h.draws + h.losses + h.broken == 0);
        for &h in index.stored_halves() {
            let st = &mut s[h as usize];
            if metric == Metric::Dtz50 {
                st.wins50 = Some(0);
                st.losses50 = Some(0);
            }
            for i in 0..index.size(h) {
                let v = table.value(h, i).expect("entry within the checked range");
                match v.outcome() {
                    Outcome::Win(n) => {
                        st.max_win[m] = Some(st.max_win[m].map_or(n, |x| x.max(n)));
                        if metric == Metric::Dtz50 {
                            *st.wins50.get_or_insert(0) += 1;
                        }
                        if count_outcomes {
                            st.wins += 1;
                        }
                    }
                    Outcome::Loss(n) => {
                        st.max_loss[m] = Some(st.max_loss[m].map_or(n, |x| x.max(n)));
                        if metric == Metric::Dtz50 {
                            *st.losses50.get_or_insert(0) += 1;
                        }
                        if count_outcomes {
                            st.losses += 1;
                        }
                    }
                    Outcome::Draw if count_outcomes => st.draws += 1,
                    Outcome::Broken if count_outcomes => st.broken += 1,
                    _ => {}
                }
            }
        }
        files.push((
            metric,
            name,
            FileStatus::Ok(Box::new(table.header().clone())),
        ));
    }
    // A symmetric endgame stores Btm only; Wtm is the same positions with colours flipped.
    if let Some(s) = stats.as_mut() {
        if material.is_symmetric() {
            s[Half::Wtm as usize] = s[Half::Btm as usize].clone();
        }
    }
    Ok(Report {
        material,
        sizes,
        broken,
        files,
        stats,
    })
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or("null".to_string(), |n| n.to_string())
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One JSON object: `{"endgame", "sizes", "broken", "files", "stats", "depth_units"}`; the last
/// says in what the `max_*` depths of `stats` count (DTM moves, DTZ and DTZ50 plies), so that a
/// script need not know the file format to compare them.
pub fn to_json(r: &Report) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "{{\"endgame\": {}, \"sizes\": {{\"wtm\": {}, \"btm\": {}}}, \"broken\": {{\"wtm\": {}, \"btm\": {}}}, \"files\": [",
        json_str(&r.material.to_string()),
        r.sizes[0],
        r.sizes[1],
        r.broken[0],
        r.broken[1]
    );
    for (i, (metric, name, status)) in r.files.iter().enumerate() {
        if i > 0 {
            o.push_str(", ");
        }
        let _ = write!(
            o,
            "{{\"metric\": {}, \"file\": {}, ",
            json_str(metric.name()),
            json_str(name)
        );
        match status {
            FileStatus::Missing => o.push_str("\"status\": \"missing\"}"),
            FileStatus::Bad(e) => {
                let _ = write!(
                    o,
                    "\"status\": \"error\", \"error\": {}}}",
                    json_str(&e.to_string())
                );
            }
            FileStatus::Ok(h) => {
                let _ = write!(
                    o,
                    "\"status\": \"ok\", \"checksum\": \"ok\", \"version\": {}, \"value_bytes\": {}, \"block_size\": {}, \"compression\": \"{}\", \"payload_bytes\": {}, \"generator\": {}, \"created\": {}, \"xxh3\": \"{:016x}\"}}",
                    h.version,
                    h.value_width,
                    h.block_size,
                    h.compression_name(),
                    h.payload_len,
                    json_str(&h.generator),
                    h.created,
                    h.payload_hash
                );
            }
        }
    }
    o.push_str("], \"stats\": ");
    match &r.stats {
        None => o.push_str("null"),
        Some(s) => {
            o.push('{');
            for h in Half::BOTH {
                let st = &s[h as usize];
                if h == Half::Btm {
                    o.push_str(", ");
                }
                let _ = write!(
                    o,
                    "\"{}\": {{\"wins\": {}, \"draws\": {}, \"losses\": {}, \"broken\": {}, \"wins50\": {}, \"losses50\": {}, \"max_dtm_win\": {}, \"max_dtm_loss\": {}, \"max_dtz_win\": {}, \"max_dtz_loss\": {}, \"max_dtz50_win\": {}, \"max_dtz50_loss\": {}}}",
                    h.name(),
                    st.wins,
                    st.draws,
                    st.losses,
                    st.broken,
                    opt(st.wins50),
                    opt(st.losses50),
                    opt(st.max_win[0]),
                    opt(st.max_loss[0]),
                    opt(st.max_win[1]),
                    opt(st.max_loss[1]),
                    opt(st.max_win[2]),
                    opt(st.max_loss[2]),
                );
            }
            o.push('}');
        }
    }
    o.push_str(
        ", \"depth_units\": {\"dtm\": \"moves\", \"dtz\": \"plies\", \"dtz50\": \"plies\"}}",
    );
    o
}

/// The human-readable report.
pub fn to_text(r: &Report) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "endgame {} ({} men)", r.material, r.material.men());
    for h in Half::BOTH {
        let (size, broken) = (r.sizes[h as usize], r.broken[h as usize]);
        let _ = writeln!(
            o,
            "  {} index size {:>13}  broken {:>13} ({:.2}%)",
            h.name(),
            size,
            broken,
            100.0 * broken as f64 / size.max(1) as f64
        );
    }
    if r.material.is_symmetric() {
        let _ = writeln!(
            o,
            "  (same men on both sides: only btm is stored, wtm is probed with colours flipped)"
        );
    }
    for (metric, name, status) in &r.files {
        match status {
            FileStatus::Missing => {
                let _ = writeln!(o, "{} file {name}: not present", metric.name());
            }
            FileStatus::Bad(e) => {
                let _ = writeln!(o, "{} file {name}: REFUSED: {e}", metric.name());
            }
            FileStatus::Ok(h) => {
                let _ = writeln!(
                    o,
                    "{} file {name}: format {}, {} byte(s) per value, {}-byte blocks, compression {}, {} bytes stored, generator '{}', created {} (unix), checksum ok ({:016x})",
                    metric.name(),
                    h.version,
                    h.value_width,
                    h.block_size,
                    h.compression_name(),
                    h.payload_len,
                    h.generator,
                    h.created,
                    h.payload_hash
                );
            }
        }
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
    }
    o
}

/// The whole `engine tbinfo` command: prints the report (text or JSON) and returns the exit
/// status: 0, 1 for a bad endgame name, 2 if a table file is present but refused.
pub fn run(endgame: &str, dir: &Path, json: bool) -> std::process::ExitCode {
    use std::process::ExitCode;
    match tbinfo(endgame, dir) {
        Ok(report) => {
            if json {
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
