//! Table files end to end: written values read back; truncated, flipped, foreign and
//! newer-format files refused by the reader with the named cause and reported by
//! `engine tbinfo` (exit status 2, no panic).

#[path = "common/made_up_table.rs"]
mod made_up_table;

use fortress::egtb::format::{
    file_name, write_table, Compression, FileSpec, Metric, Outcome, TableError, TableFile,
    TableSpec, TableWriter, TbValue, Wdl5, COMPRESSION_LZ4, COMPRESSION_NONE, COMPRESSION_ZSTD,
    FORMAT_VERSION, HEADER_LEN,
};
use fortress::egtb::{EndgameIndex, Half, Material};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fortress-{}-{tag}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// Made-up but deterministic values: broken exactly where the index says so, otherwise a mix
/// of wins, draws and losses with depths from the index (up to `max_depth`).
fn write(dir: &Path, name: &str, metric: Metric, max_depth: u16) -> (PathBuf, Vec<Vec<TbValue>>) {
    write_as(dir, name, metric, max_depth, Compression::Zstd)
}

fn write_as(
    dir: &Path,
    name: &str,
    metric: Metric,
    max_depth: u16,
    compression: Compression,
) -> (PathBuf, Vec<Vec<TbValue>>) {
    made_up_table::write(dir, name, metric, compression, |_, i| match i % 3 {
        0 => TbValue::DRAW,
        1 => TbValue::win(1 + (i / 3 % max_depth as u64) as u16).unwrap(),
        _ => TbValue::loss((i / 7 % (max_depth as u64 + 1)) as u16).unwrap(),
    })
}

/// Every storage, raw, LZ4- and zstd-compressed blocks, reads back every value written; the
/// compressed files are the smaller.
#[test]
fn written_values_read_back() {
    let dir = temp_dir("roundtrip");
    let cases = [("KQK", 10, 1), ("KQKQ", 127, 2), ("KRK", 126, 1)];
    let storages = [Compression::None, Compression::Lz4, Compression::Zstd];
    for ((name, depth, width), compression) in
        cases.into_iter().flat_map(|c| storages.map(|s| (c, s)))
    {
        let raw_len = (compression != Compression::None).then(|| {
            fs::metadata(dir.join(file_name(&Material::parse(name).unwrap(), Metric::Dtm)))
                .unwrap()
                .len()
        });
        let (path, vals) = write_as(&dir, name, Metric::Dtm, depth, compression);
        if let Some(raw_len) = raw_len {
            let len = fs::metadata(&path).unwrap().len();
            assert!(
                len < raw_len,
                "{name}: compressed {len} bytes, raw {raw_len}"
            );
        }
        assert_eq!(
            path.file_name().unwrap().to_str().unwrap(),
            file_name(&Material::parse(name).unwrap(), Metric::Dtm)
        );
        let t = TableFile::open(&path).unwrap();
        let h = t.header();
        assert_eq!(h.endgame, name);
        assert_eq!(h.metric, Metric::Dtm);
        assert_eq!(h.value_width, width, "{name}");
        let code = [COMPRESSION_NONE, COMPRESSION_LZ4, COMPRESSION_ZSTD];
        assert_eq!(h.compression, code[compression as usize], "{name}");
        let idx = EndgameIndex::new(&Material::parse(name).unwrap());
        for (k, &half) in idx.stored_halves().iter().enumerate() {
            assert_eq!(t.entries(half), Some(idx.size(half)));
            for (i, v) in vals[k].iter().enumerate() {
                assert_eq!(t.value(half, i as u64), Some(*v), "{name} {half:?} {i}");
            }
            assert_eq!(t.value(half, idx.size(half)), None);
        }
        if name == "KQKQ" {
            assert_eq!(
                t.entries(Half::Wtm),
                None,
                "a symmetric endgame stores btm only"
            );
        }
        // No temporary file is left behind.
        let leftovers: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains("tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_writer_refuses_what_it_cannot_store() {
    let dir = temp_dir("refuse");
    let m = Material::parse("KRKQ").unwrap();
    let v = [TbValue::DRAW];
    let r = write_table(
        &dir,
        &TableSpec {
            material: m,
            metric: Metric::Dtm,
            halves: &[(Half::Wtm, &v)],
            compression: Compression::Zstd,
            unmark_broken: false,
            delta_of: None,
            depths: false,
        },
    );
    assert!(
        matches!(r, Err(TableError::BadInput(_))),
        "non-canonical colouring"
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// The six-man generator writes its files a king block at a time: pieces of any length, cut
/// anywhere in a block, give the file that `write_table` writes from whole halves, in both
/// widths and as DTZ50's differences from DTZ. A writer given too many or too few values, or
/// dropped unfinished, refuses and leaves no file.
#[test]
fn a_file_written_piece_by_piece_is_the_file_written_whole() {
    let (whole, pieces) = (temp_dir("whole"), temp_dir("pieces"));
    let m = Material::parse("KRKN").unwrap();
    let index = EndgameIndex::new(&m);
    let halves = index.stored_halves();
    for deepest in [100u16, 300] {
        let value = |h: Half, i: u64, rule: bool| match index.decode(h, i) {
            None => TbValue::BROKEN,
            Some(_) if i.is_multiple_of(5) => TbValue::DRAW,
            Some(_) => {
                let d = 1 + (i / 3 % deepest as u64) as u16;
                // Under the rule the deepest wins are draws: DTZ50 differs from DTZ there.
                if rule && d > 50 && i % 2 == 1 {
                    TbValue::DRAW
                } else if i % 2 == 1 {
                    TbValue::win(d).unwrap()
                } else {
                    TbValue::loss(d).unwrap()
                }
            }
        };
        let values = |rule: bool| -> Vec<Vec<TbValue>> {
            halves
                .iter()
                .map(|&h| (0..index.size(h)).map(|i| value(h, i, rule)).collect())
                .collect()
        };
        let (dtz, dtz50) = (values(false), values(true));
        let by_half = |v: &[Vec<TbValue>]| -> Vec<(Half, Vec<TbValue>)> {
            halves.iter().copied().zip(v.iter().cloned()).collect()
        };
        let spec = |metric, halves: &[(Half, &[TbValue])], delta_of| {
            let halves: Vec<(Half, &[TbValue])> = halves.to_vec();
            write_table(
                &whole,
                &TableSpec {
                    material: m,
                    metric,
                    halves: &halves,
                    compression: Compression::Zstd,
                    unmark_broken: true,
                    delta_of,
                    depths: false,
                },
            )
            .unwrap()
        };
        let dtz_halves = by_half(&dtz);
        let dtz_refs: Vec<(Half, &[TbValue])> =
            dtz_halves.iter().map(|(h, v)| (*h, &v[..])).collect();
        let dtz_path = spec(Metric::Dtz, &dtz_refs, None);
        let dtz_file = TableFile::open(&dtz_path).unwrap();
        let d50_halves = by_half(&dtz50);
        let d50_refs: Vec<(Half, &[TbValue])> =
            d50_halves.iter().map(|(h, v)| (*h, &v[..])).collect();
        spec(Metric::Dtz50, &d50_refs, Some(&dtz_file));

        let max_raw = |v: &[Vec<TbValue>]| v.iter().flatten().map(|v| v.raw()).max().unwrap();
        for (metric, vals) in [(Metric::Dtz, &dtz), (Metric::Dtz50, &dtz50)] {
            let delta = metric == Metric::Dtz50;
            let file_spec = FileSpec {
                material: m,
                metric,
                halves,
                max_raw: max_raw(vals),
                compression: Compression::Zstd,
                unmark_broken: true,
                delta,
                depths: false,
            };
            let mut w = TableWriter::create(&pieces, &file_spec).unwrap();
            let cuts = [1usize, 4095, 7, 8193, 100_000, 12_289];
            for (k, &h) in halves.iter().enumerate() {
                w.begin_half(h, index.size(h)).unwrap();
                let (mut at, mut c) = (0, 0);
                while at < vals[k].len() {
                    let end = (at + cuts[c % cuts.len()]).min(vals[k].len());
                    let base = delta.then(|| &dtz[k][at..end]);
                    w.push(&vals[k][at..end], base).unwrap();
                    (at, c) = (end, c + 1);
                }
                w.end_half().unwrap();
            }
            w.finish().unwrap();
            let name = file_name(&m, metric);
            let (a, b) = (
                fs::read(whole.join(&name)).unwrap(),
                fs::read(pieces.join(&name)).unwrap(),
            );
            assert_eq!(
                a[HEADER_LEN..],
                b[HEADER_LEN..],
                "{name}, deepest {deepest}"
            );
            // The headers differ only in the time of writing and so in their checksum.
            assert_eq!(a[..144], b[..144], "{name}");
            assert_eq!(a[152..248], b[152..248], "{name}");
            assert_eq!(a[34], if deepest > 120 { 2 } else { 1 }, "{name}: width");
        }
    }

    let file_spec = FileSpec {
        material: m,
        metric: Metric::Dtm,
        halves,
        max_raw: 3,
        compression: Compression::Zstd,
        unmark_broken: true,
        delta: false,
        depths: false,
    };
    let bad = |r: Result<(), TableError>| matches!(r, Err(TableError::BadInput(_)));
    let size = index.size(halves[0]) as usize;
    let mut w = TableWriter::create(&pieces, &file_spec).unwrap();
    assert!(bad(w.push(&[TbValue::DRAW], None)), "no half begun");
    assert!(bad(w.begin_half(halves[1], 1)), "halves out of order");
    w.begin_half(halves[0], size as u64).unwrap();
    assert!(
        bad(w.push(&vec![TbValue::DRAW; size + 1], None)),
        "too many values"
    );
    assert!(
        bad(w.push(&[TbValue::DRAW], Some(&[TbValue::DRAW]))),
        "DTZ's values unasked"
    );
    w.push(&vec![TbValue::DRAW; size - 1], None).unwrap();
    assert!(bad(w.end_half()), "a value short");
    assert!(fs::read_dir(&pieces)
        .unwrap()
        .any(|e| { e.unwrap().file_name().to_string_lossy().ends_with(".tmp") }));
    drop(w);
    let left: Vec<_> = fs::read_dir(&pieces)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    fs::remove_dir_all(&whole).unwrap();
    fs::remove_dir_all(&pieces).unwrap();
}

/// Each damaged copy of a good file, with the error the reader must give and the words tbinfo
/// must print.
fn damage(path: &Path, how: &str) {
    let mut b = fs::read(path).unwrap();
    match how {
        "truncated-payload" => b.truncate(b.len() - 100),
        "truncated-header" => b.truncate(100),
        "flipped-payload" => {
            let i = (HEADER_LEN + b.len()) / 2;
            b[i] ^= 0x10;
        }
        "flipped-header" => b[20] ^= 0x01, // a letter of the endgame name
        "magic" => b[0] = b'X',
        "newer" => b[8] = FORMAT_VERSION as u8 + 1, // a format this reader does not know
        _ => unreachable!(),
    }
    fs::write(path, b).unwrap();
}

fn engine(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn damaged_files_are_refused_and_reported() {
    type IsRight = fn(&TableError) -> bool;
    let cases: [(&str, &str, IsRight); 6] = [
        ("truncated-payload", "truncated", |e| {
            matches!(e, TableError::Truncated { .. })
        }),
        ("truncated-header", "truncated", |e| {
            matches!(e, TableError::Truncated { .. })
        }),
        ("flipped-payload", "checksum mismatch", |e| {
            matches!(e, TableError::ChecksumMismatch { .. })
        }),
        ("flipped-header", "corrupt header", |e| {
            matches!(e, TableError::Corrupt { .. })
        }),
        ("magic", "bad magic", |e| {
            matches!(e, TableError::BadMagic { .. })
        }),
        ("newer", "newer version", |e| {
            matches!(e, TableError::NewerVersion { .. })
        }),
    ];
    for (how, words, is_right) in cases {
        let dir = temp_dir(how);
        let (path, _) = write(&dir, "KQK", Metric::Dtm, 10);
        assert!(TableFile::open(&path).is_ok());
        damage(&path, how);
        match TableFile::open(&path) {
            Ok(_) => panic!("{how}: damaged file accepted"),
            Err(e) => {
                assert!(is_right(&e), "{how}: wrong error {e}");
                assert!(e.to_string().contains(words), "{how}: message '{e}'");
            }
        }
        let (code, out, err) = engine(&["tbinfo", "KQK", "--dir", dir.to_str().unwrap()]);
        assert_eq!(code, 2, "{how}: exit status; stdout {out} stderr {err}");
        assert!(out.contains(words), "{how}: tbinfo said {out}");
        assert!(!err.contains("panicked"), "{how}: {err}");
        let (code, out, _) = engine(&["tbinfo", "KQK", "--dir", dir.to_str().unwrap(), "--json"]);
        assert_eq!(code, 2);
        let json: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
        let dtm = &json["files"][0];
        assert_eq!(dtm["status"], "error", "{how}: {out}");
        assert!(
            dtm["error"].as_str().unwrap().contains(words),
            "{how}: {out}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn a_file_of_another_endgame_is_refused() {
    let dir = temp_dir("wrong");
    let (path, _) = write(&dir, "KQK", Metric::Dtm, 10);
    let r = TableFile::open_for(&path, &Material::parse("KRK").unwrap(), Metric::Dtm);
    assert!(matches!(r, Err(TableError::WrongEndgame { .. })));
    let r = TableFile::open_for(&path, &Material::parse("KQK").unwrap(), Metric::Dtz);
    assert!(matches!(r, Err(TableError::WrongEndgame { .. })));
    // Renamed to another endgame's name, tbinfo refuses it.
    fs::rename(&path, dir.join("KRK.dtm.ftb")).unwrap();
    let (code, out, _) = engine(&["tbinfo", "KRK", "--dir", dir.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(out.contains("wrong endgame"), "{out}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tbinfo_reports_sizes_and_file_statistics() {
    let dir = temp_dir("stats");
    let (_, dtm) = write(&dir, "KRKN", Metric::Dtm, 40);
    let (_, dtz) = write(&dir, "KRKN", Metric::Dtz, 13);
    let dir_arg = dir.to_str().unwrap();
    let (code, out, err) = engine(&["tbinfo", "KNKR", "--dir", dir_arg, "--json", "--stats"]);
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    let idx = EndgameIndex::new(&Material::parse("KRKN").unwrap());
    assert_eq!(json["endgame"], "KRKN");
    assert_eq!(json["sizes"]["wtm"], idx.size(Half::Wtm));
    assert_eq!(json["sizes"]["btm"], idx.size(Half::Btm));
    assert_eq!(json["broken"]["wtm"], idx.count_broken(Half::Wtm));
    assert_eq!(json["broken"]["btm"], idx.count_broken(Half::Btm));
    for (k, half) in [Half::Wtm, Half::Btm].into_iter().enumerate() {
        let count = |f: fn(&Outcome) -> bool| dtm[k].iter().filter(|v| f(&v.outcome())).count();
        let deepest = |vals: &Vec<TbValue>, win: bool| {
            vals.iter()
                .filter_map(|v| match (v.outcome(), win) {
                    (Outcome::Win(n), true) | (Outcome::Loss(n), false) => Some(n),
                    _ => None,
                })
                .max()
                .unwrap()
        };
        let want = serde_json::json!({
            "wins": count(|o| matches!(o, Outcome::Win(_))),
            "draws": count(|o| matches!(o, Outcome::Draw)),
            "losses": count(|o| matches!(o, Outcome::Loss(_))),
            "broken": count(|o| matches!(o, Outcome::Broken)),
            "wins50": null,
            "losses50": null,
            "max_dtm_win": deepest(&dtm[k], true),
            "max_dtm_loss": deepest(&dtm[k], false),
            "max_dtz_win": deepest(&dtz[k], true),
            "max_dtz_loss": deepest(&dtz[k], false),
            "max_dtz50_win": null,
            "max_dtz50_loss": null,
        });
        assert_eq!(json["stats"][half.name()], want, "{out}");
        // The text report gives the same depths with their units.
        let (_, text, _) = engine(&["tbinfo", "KRKN", "--dir", dir_arg, "--stats"]);
        let want = format!(
            "deepest win/loss: DTM {}/{} moves, DTZ {}/{} plies, DTZ50 -/- plies",
            deepest(&dtm[k], true),
            deepest(&dtm[k], false),
            deepest(&dtz[k], true),
            deepest(&dtz[k], false),
        );
        assert!(text.contains(&want), "missing {want} in {text}");
    }
    assert_eq!(
        json["depth_units"],
        serde_json::json!({"dtm": "moves", "dtz": "plies", "dtz50": "plies"})
    );
    // Without --stats the files are not scanned: sizes, broken entries and headers only.
    let (code, out, _) = engine(&["tbinfo", "KRKN", "--dir", dir_arg, "--json"]);
    assert_eq!(code, 0);
    let quick: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    assert!(quick["stats"].is_null(), "{out}");
    assert_eq!(quick["broken"], json["broken"]);
    assert_eq!(quick["files"], json["files"]);
    let (code, text, _) = engine(&["tbinfo", "KRKN", "--dir", dir.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(
        text.contains("checksum ok") && text.contains("dtz50 file KRKN.dtz50.ftb: not present"),
        "{text}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// A six-man build the machine cannot hold is refused before anything is built (here under an
/// address-space limit of 2 GB: KQRKBN's bitmaps alone take about 11 GB), with what it needs.
/// The plan is checked whole, so the endgame named may be one of its five-man sub-endgames
/// (KBNKQ needs about 1.6 GB, at the edge of what the limit leaves).
#[cfg(target_os = "linux")]
#[test]
fn a_build_beyond_the_memory_is_refused_up_front() {
    let dir = temp_dir("refused");
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 2000000 && exec {} gentb KQRKBN --dir {}",
            env!("CARGO_BIN_EXE_engine"),
            dir.display()
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        err.contains(" cannot be built here: memory:") && err.contains("MiB requested"),
        "{err}"
    );
    assert_eq!(
        fs::read_dir(&dir).unwrap().count(),
        0,
        "something was built"
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// What killed builders left in a table directory (temporary files, staging directories) is
/// removed by the next build there; what running processes (pid 1) have there is left alone,
/// and so is what another machine's builders have there (a shared directory), whose process
/// ids say nothing here.
#[cfg(target_os = "linux")]
#[test]
fn leftovers_of_killed_builders_are_removed() {
    let dir = temp_dir("stale");
    let host = fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .replace(['/', '.'], "_");
    let stale = dir.join(".KQK.dtm.ftb.999999999.tmp"); // above Linux's pid_max
    let live = dir.join(".KQK.dtm.ftb.1.tmp");
    let stale_stage = dir.join(".staging.999999999.0");
    let stale_here = dir.join(format!(".staging.999999999.1.{host}"));
    let other_host = dir.join(".staging.999999999.2.another-machine");
    let live_stage = dir.join(format!(".staging.1.0.{host}"));
    for d in [&stale_stage, &stale_here, &other_host, &live_stage] {
        fs::create_dir(d).unwrap();
        fs::write(d.join("KQK.dtm.ftb"), b"partial").unwrap();
    }
    fs::write(&stale, b"partial").unwrap();
    fs::write(&live, b"partial").unwrap();
    let (code, out, err) = engine(&["gentb", "KNK", "--dir", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!stale.exists(), "stale temporary file left");
    assert!(!stale_stage.exists(), "stale staging directory left");
    assert!(
        !stale_here.exists(),
        "stale staging directory of this host left"
    );
    assert!(
        other_host.exists(),
        "another machine's staging directory removed"
    );
    assert!(live.exists(), "a running writer's file removed");
    assert!(
        live_stage.exists(),
        "a running builder's staging directory removed"
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// `gentb` writes a table into a staging directory and moves it into the table directory only
/// once it is verified: killed during verification, it leaves the table absent (not present
/// unverified), and the next run builds it again and removes the killed run's staging directory.
#[cfg(target_os = "linux")]
#[test]
fn a_kill_during_verification_leaves_no_table() {
    let dir = temp_dir("killed");
    let dir_arg = dir.to_str().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(["gentb", "KQKR", "--dir", dir_arg, "--threads", "1"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let written = |d: &Path| {
        ["dtm", "dtz", "dtz50"]
            .iter()
            .all(|x| d.join(format!("KQKR.{x}.ftb")).is_file())
    };
    // The staging directory of one table build: `.staging.<pid>.<n>.<host>`.
    let prefix = format!(".staging.{}.", child.id());
    let staged = || {
        fs::read_dir(&dir).unwrap().flatten().find_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name.starts_with(&prefix) && written(&e.path())).then(|| e.path())
        })
    };
    // All three files staged: generation is over and verification (seconds for KQKR) runs.
    let start = std::time::Instant::now();
    let staging = loop {
        if let Some(s) = staged() {
            break s;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "gentb ended before it was seen verifying"
        );
        assert!(start.elapsed().as_secs() < 300, "KQKR never staged");
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    for x in ["dtm", "dtz", "dtz50"] {
        assert!(
            !dir.join(format!("KQKR.{x}.ftb")).exists(),
            "an unverified KQKR.{x}.ftb reached the table directory"
        );
    }
    assert!(
        written(&staging),
        "the staged files are where the kill left them"
    );

    let (code, out, err) = engine(&["gentb", "KQKR", "--dir", dir_arg]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("KQK     present, kept"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("KQKR ") && l.contains("0 disagree")),
        "KQKR not rebuilt and verified:\n{out}"
    );
    assert!(written(&dir), "KQKR missing after the second run");
    assert!(
        !staging.exists(),
        "the killed run's staging directory was left"
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// `--no-verify` builds and publishes without the verification pass, says so, and a later
/// `--verify` checks what it left.
#[test]
fn tables_built_without_verification_verify_later() {
    let dir = temp_dir("noverify");
    let dir_arg = dir.to_str().unwrap();
    let (code, out, err) = engine(&["gentb", "KRK", "--dir", dir_arg, "--no-verify"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.lines().any(|l| l.starts_with("KRK ")) && !out.contains("disagree"),
        "KRK built and verified all the same:\n{out}"
    );
    assert!(out.contains("not verified"), "{out}");
    for x in ["dtm", "dtz", "dtz50"] {
        assert!(dir.join(format!("KRK.{x}.ftb")).is_file(), "KRK.{x}.ftb");
    }
    let (code, out, err) = engine(&["gentb", "KRK", "--dir", dir_arg, "--verify"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("KRK: ") && out.contains(" 0 disagreements"),
        "{out}"
    );
    // A WDL file that is sound as a file but says draw everywhere: the verifier finds it out.
    let krk = Material::parse("KRK").unwrap();
    let index = EndgameIndex::new(&krk);
    let mut w = TableWriter::create(
        &dir,
        &FileSpec {
            material: krk,
            metric: Metric::Wdl,
            halves: index.stored_halves(),
            max_raw: Wdl5::Win.code(),
            compression: Compression::Zstd,
            unmark_broken: true,
            delta: false,
            depths: false,
        },
    )
    .unwrap();
    for &h in index.stored_halves() {
        w.begin_half(h, index.size(h)).unwrap();
        let draws = vec![TbValue::from_raw(Wdl5::Draw.code()); index.size(h) as usize];
        w.push(&draws, None).unwrap();
        w.end_half().unwrap();
    }
    w.finish().unwrap();
    let (code, out, err) = engine(&["gentb", "KRK", "--dir", dir_arg, "--verify"]);
    assert_ne!(code, 0, "{out}{err}");
    assert!(
        !out.contains(" 0 disagreements") && format!("{out}{err}").contains("wdl"),
        "{out}{err}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// `gentb` given nothing to do, or what it cannot do, says so and fails; it creates nothing.
#[test]
fn gentb_refuses_what_it_cannot_do() {
    let dir = temp_dir("refuse");
    let dir_arg = dir.to_str().unwrap();
    for (args, words) in [
        (vec!["gentb", "--dir", dir_arg], "name endgames"),
        (
            vec!["gentb", "KRK", "--threads", "0", "--dir", dir_arg],
            "--threads",
        ),
        (vec!["gentb", "--men", "8", "--dir", dir_arg], "--men"),
        (
            vec!["gentb", "KRBNKRB", "--dir", dir_arg],
            "cannot be built here",
        ),
        (vec!["gentb", "--machines", "4", "KRK"], "--plan"),
        (
            vec!["gentb", "KXK", "--dir", dir_arg],
            "not an endgame name",
        ),
        (
            vec!["gentb", "KRK", "--verify", "--no-verify"],
            "cannot be used",
        ),
    ] {
        let (code, out, err) = engine(&args);
        assert_ne!(code, 0, "{args:?} succeeded: {out}{err}");
        assert!(err.contains(words), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    assert_eq!(
        fs::read_dir(&dir).unwrap().count(),
        0,
        "something was created"
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// Off a terminal, `gentb` reports each table it starts, "table k of N", building and verifying.
#[test]
fn gentb_reports_progress_across_tables() {
    let dir = temp_dir("progress");
    let dir_arg = dir.to_str().unwrap();
    let (code, out, err) = engine(&["gentb", "KRKN", "--dir", dir_arg]);
    assert_eq!(code, 0, "{out}{err}");
    for m in ["KRK", "KNK"] {
        assert!(
            (1..=2).any(|k| err.contains(&format!("gentb: table {k} of 3: {m}"))),
            "{m} not reported in {err}"
        );
    }
    assert!(err.contains("gentb: table 3 of 3: KRKN, about "), "{err}");
    let (code, out, err) = engine(&["gentb", "KRKN", "KRK", "--verify", "--dir", dir_arg]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("gentb: table 2 of 2: KRK"), "{err}");
    fs::remove_dir_all(&dir).unwrap();
}

/// `tbinfo` knows the broken entries of every endgame of 3 to 5 men without counting them, and
/// what it knows is what the index counts (3-4 men here; 5 men in `index_roundtrip`).
#[test]
fn tbinfo_knows_broken_entries_without_counting() {
    let dir = temp_dir("broken");
    for m in Material::all_up_to(5).into_iter().filter(|m| m.men() > 2) {
        let info = fortress::egtb::report::info::tbinfo(&m.to_string(), &dir, false).unwrap();
        let broken = info
            .broken
            .unwrap_or_else(|| panic!("{m}: no stored count"));
        if m.men() <= 4 {
            let idx = EndgameIndex::new(&m);
            assert_eq!(
                broken,
                [idx.count_broken(Half::Wtm), idx.count_broken(Half::Btm)],
                "{m}"
            );
        }
    }
    fs::remove_dir_all(&dir).unwrap();
}

/// Files of format 1 (LZ4 blocks, broken entries marked, DTZ50 whole; KPK as the generator of
/// that format wrote it) are read, and `gentb --recompress` converts them in place to the
/// current format: smaller, decoding to the same values (the recorded hashes of
/// `tests/data/values_3_4_men.csv`), left alone when run again.
#[test]
fn format_1_files_are_read_and_recompressed() {
    let dir = temp_dir("format1");
    let kpk = Material::parse("KPK").unwrap();
    for metric in Metric::ALL {
        let name = file_name(&kpk, metric);
        fs::copy(Path::new("tests/data/format1").join(&name), dir.join(&name)).unwrap();
    }
    let old = fortress::egtb::EndgameTables::open(&dir, &kpk).expect("format 1 opens");
    assert!(old.marks_broken());
    let probe = |t: &fortress::egtb::EndgameTables| {
        let index = t.index();
        index
            .stored_halves()
            .iter()
            .flat_map(|&h| (0..index.size(h)).map(move |i| (h, i)))
            .filter(|&(h, i)| index.decode(h, i).is_some())
            .map(|(h, i)| t.values(h, i).unwrap())
            .collect::<Vec<_>>()
    };
    let before = probe(&old);
    drop(old);
    let dir_arg = dir.to_str().unwrap();
    let (code, out, err) = engine(&["gentb", "--recompress", "--dir", dir_arg]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("KPK: ") && out.contains("positions checked"),
        "{out}"
    );
    let new = fortress::egtb::EndgameTables::open(&dir, &kpk).expect("converted files open");
    assert!(!new.marks_broken());
    assert_eq!(probe(&new), before, "converted values differ");
    // The WDL file added gives each legal entry the result of its DTM and DTZ50.
    assert!(new.file(Metric::Wdl).is_some(), "no WDL file");
    let results = |t: &fortress::egtb::EndgameTables| {
        let index = t.index();
        index
            .stored_halves()
            .iter()
            .flat_map(|&h| (0..index.size(h)).map(move |i| (h, i)))
            .filter(|&(h, i)| index.decode(h, i).is_some())
            .map(|(h, i)| t.result(h, i).unwrap())
            .collect::<Vec<_>>()
    };
    let derived: Vec<Wdl5> = before
        .iter()
        .map(|[dtm, _, dtz50]| Wdl5::of(*dtm, *dtz50).unwrap())
        .collect();
    assert_eq!(results(&new), derived, "WDL file against DTM and DTZ50");
    drop(new);
    // Depths alone without their WDL file are a damaged set: refused, with the reason.
    let wdl_path = dir.join(file_name(&kpk, Metric::Wdl));
    let wdl = fs::read(&wdl_path).unwrap();
    fs::remove_file(&wdl_path).unwrap();
    let (code, out, err) = engine(&["gentb", "--recompress", "--dir", dir_arg]);
    assert_ne!(code, 0, "{out}{err}");
    assert!(err.contains("no WDL file"), "{out}{err}");
    fs::write(&wdl_path, wdl).unwrap();
    let new = fortress::egtb::EndgameTables::open(&dir, &kpk).unwrap();
    assert_eq!(results(&new), derived);
    assert_eq!(probe(&new), before);
    for metric in Metric::ALL {
        let path = dir.join(file_name(&kpk, metric));
        let h = TableFile::open(&path).unwrap().header().clone();
        assert_eq!(h.version, FORMAT_VERSION);
        assert_eq!(h.compression, COMPRESSION_ZSTD);
        let old_len = fs::metadata(Path::new("tests/data/format1").join(file_name(&kpk, metric)))
            .unwrap()
            .len();
        let new_len = fs::metadata(&path).unwrap().len();
        assert!(new_len < old_len, "{metric:?}: {new_len} >= {old_len}");
    }
    // Without its sub-endgames no side can be worked out by one ply: both are kept.
    let (code, out, _) = engine(&["gentb", "--recompress", "--dir", dir_arg]);
    assert_eq!(code, 0);
    assert!(out.contains("KPK: in the current format, kept"), "{out}");
    // With them, DTZ and DTZ50 are stored for one side, the other read by one ply.
    let dtz_len = |d: &Path| {
        fs::metadata(d.join(file_name(&kpk, Metric::Dtz)))
            .unwrap()
            .len()
    };
    let two_sided = dtz_len(&dir);
    let subs: Vec<Material> = kpk
        .sub_endgames()
        .into_iter()
        .filter(|m| m.men() > 2)
        .collect();
    let opts = fortress::egtb::generate::GenOptions {
        verify: false,
        ..fortress::egtb::generate::GenOptions::new(&dir)
    };
    fortress::egtb::generate::gentb(&subs, &opts, &mut |_| {}).expect("sub-endgames built");
    let (code, out, err) = engine(&["gentb", "--recompress", "--dir", dir_arg]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("KPK: ") && out.contains("positions checked"),
        "{out}"
    );
    let new = fortress::egtb::EndgameTables::open(&dir, &kpk).unwrap();
    let missing = new.zeroing_missing().expect("one side stored");
    assert!(dtz_len(&dir) < two_sided);
    let sub_tables: Vec<_> = subs
        .iter()
        .map(|m| fortress::egtb::EndgameTables::open(&dir, m).unwrap())
        .collect();
    let index = new.index();
    let mut pos = fortress::chess::Position::startpos();
    let by_one_ply: Vec<_> = index
        .stored_halves()
        .iter()
        .flat_map(|&h| (0..index.size(h)).map(move |i| (h, i)))
        .filter(|&(h, i)| index.decode(h, i).is_some())
        .map(|(h, i)| {
            assert_eq!(new.values(h, i).is_none(), h == missing);
            new.values_by_one_ply(h, i, &sub_tables[..], &mut pos)
                .unwrap()
        })
        .collect();
    assert_eq!(by_one_ply, before, "one side and one ply against format 1");
    assert_eq!(results(&new), derived);
    drop(new);
    let (code, out, _) = engine(&["gentb", "--recompress", "--dir", dir_arg]);
    assert_eq!(code, 0);
    assert!(out.contains("KPK: in the current format, kept"), "{out}");
    fs::remove_dir_all(&dir).unwrap();
}

/// Two builds of a table with `SOURCE_DATE_EPOCH` set are the same bytes, that time in their
/// headers; without it, the header holds the clock's time.
#[test]
fn builds_with_a_source_date_are_byte_identical() {
    let build = |tag: &str, epoch: Option<&str>| {
        let dir = temp_dir(tag);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_engine"));
        cmd.args(["gentb", "KRK", "--dir", dir.to_str().unwrap()]);
        match epoch {
            Some(e) => cmd.env("SOURCE_DATE_EPOCH", e),
            None => cmd.env_remove("SOURCE_DATE_EPOCH"),
        };
        assert!(cmd.status().unwrap().success(), "gentb KRK");
        let mut files: Vec<(String, Vec<u8>)> = fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "ftb"))
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                (name, fs::read(e.path()).unwrap())
            })
            .collect();
        files.sort();
        fs::remove_dir_all(&dir).unwrap();
        files
    };
    let created = |bytes: &[u8]| u64::from_le_bytes(bytes[144..152].try_into().unwrap());
    let a = build("epoch-a", Some("1234567890"));
    let b = build("epoch-b", Some("1234567890"));
    assert!(a.len() >= 3, "KRK's files: {}", a.len());
    assert_eq!(a, b, "two builds with one SOURCE_DATE_EPOCH differ");
    assert!(a.iter().all(|(_, f)| created(f) == 1_234_567_890));
    let now = build("epoch-none", None);
    assert!(now.iter().all(|(_, f)| created(f) > 1_700_000_000));
}

/// A run records each table it builds in `gentb.plan` (bytes and payload checksum of each
/// file, as the files' headers give them), and `--plan` reads that record back: what is
/// present, what is left, and the rates the estimates come from; a damaged record is an error,
/// not overwritten.
#[test]
fn a_run_records_its_plan_and_the_plan_shows_what_is_left() {
    let dir = temp_dir("plan");
    let d = dir.to_str().unwrap();
    let (code, _, err) = engine(&["gentb", "--men", "3", "--dir", d]);
    assert_eq!(code, 0, "{err}");
    let text = fs::read_to_string(dir.join("gentb.plan")).unwrap();
    let built: Vec<&str> = text.lines().filter(|l| l.starts_with("built\t")).collect();
    assert_eq!(built.len(), 5, "{text}");
    for line in &built {
        let f: Vec<&str> = line.split('\t').collect();
        let m = Material::parse(f[1]).unwrap();
        assert_ne!(
            f[6], "-",
            "verified builds record their verification: {line}"
        );
        let metrics = [Metric::Dtm, Metric::Dtz, Metric::Dtz50, Metric::Wdl];
        for (metric, rec) in metrics.iter().zip(&f[7..11]) {
            let path = dir.join(file_name(&m, *metric));
            let t = TableFile::open(&path).unwrap();
            let want = format!(
                "{}:{:016x}",
                fs::metadata(&path).unwrap().len(),
                t.header().payload_hash
            );
            assert_eq!(*rec, want, "{line}");
        }
    }
    let (code, out, err) = engine(&["gentb", "--plan", "--men", "4", "--dir", d]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("plan of 35 endgames"), "{out}");
    assert!(
        out.contains("5 present, 30 left in 30 units of work"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.split_whitespace().nth(1) == Some("KQKQ")),
        "{out}"
    );
    assert!(
        !out.lines()
            .any(|l| l.split_whitespace().nth(1) == Some("KQK")),
        "{out}"
    );
    for solver in ["values:", "bitmaps:", "structures:"] {
        assert!(out.contains(solver), "{out}");
    }
    // A pawnless six-man endgame goes to the bitmap solver, one with pawns to the structures'.
    let (code, out, _) = engine(&["gentb", "--plan", "KBBKNN", "KRPPKR", "--dir", d]);
    assert_eq!(code, 0);
    let row = |name: &str| {
        out.lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name))
            .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
            .unwrap_or_else(|| panic!("{name} in {out}"))
    };
    let kbbknn = EndgameIndex::new(&Material::parse("KBBKNN").unwrap());
    let size: u64 = kbbknn.stored_halves().iter().map(|&h| kbbknn.size(h)).sum();
    assert_eq!(row("KBBKNN")[2], "bitmaps");
    assert_eq!(row("KBBKNN")[3], size.to_string());
    assert_eq!(row("KRPPKR")[2], "structures");
    let units: Vec<usize> = row("KRPPKR")[4]
        .split('/')
        .map(|n| n.parse().unwrap())
        .collect();
    assert!(units[0] == 0 && units[1] > 1, "{out}");
    // A build without verification records none; a later --verify records its time.
    let verification = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("built\tKQKR\t"))
            .map(|l| l.split('\t').nth(6).unwrap().to_string())
    };
    let (code, _, err) = engine(&["gentb", "KQKR", "--no-verify", "--dir", d]);
    assert_eq!(code, 0, "{err}");
    let text = fs::read_to_string(dir.join("gentb.plan")).unwrap();
    assert_eq!(verification(&text).as_deref(), Some("-"), "{text}");
    let (code, _, err) = engine(&["gentb", "KQKR", "--verify", "--dir", d]);
    assert_eq!(code, 0, "{err}");
    let text = fs::read_to_string(dir.join("gentb.plan")).unwrap();
    let seconds: f64 = verification(&text).unwrap().parse().unwrap();
    assert!(seconds >= 0.0, "{text}");
    // Present tables are kept, and so is their record.
    let (code, _, err) = engine(&["gentb", "--men", "3", "--dir", d]);
    assert_eq!(code, 0, "{err}");
    let again = fs::read_to_string(dir.join("gentb.plan")).unwrap();
    assert_eq!(
        again.lines().filter(|l| l.starts_with("built\t")).count(),
        6
    );
    fs::write(
        dir.join("gentb.plan"),
        again.clone() + "built\tKQK\tnonsense\n",
    )
    .unwrap();
    let (code, _, err) = engine(&["gentb", "--plan", "--men", "4", "--dir", d]);
    assert_ne!(code, 0);
    assert!(
        err.contains("gentb.plan") && err.contains("not a plan line"),
        "{err}"
    );
    let (code, _, _) = engine(&["gentb", "--men", "3", "--dir", d]);
    assert_ne!(code, 0);
    assert!(fs::read_to_string(dir.join("gentb.plan"))
        .unwrap()
        .contains("nonsense"));
    let _ = fs::remove_dir_all(&dir);
}
