//! Reading an endgame's values at every entry, the side to move that DTZ and DTZ50 leave out
//! worked out by one ply, and rewriting the files with values for both sides, as older files
//! hold them.

#![allow(dead_code)]

use fortress::chess::Position;
use fortress::egtb::format::{write_table, Compression, Metric, TableSpec, TbValue};
use fortress::egtb::generate::open_subs;
use fortress::egtb::{EndgameTables, Half, Material};
use std::path::Path;

/// Every value of `metric` of `m` in `dir` at every entry of the index, per stored half
/// (broken entries of a side worked out read as broken).
pub fn read_metric(dir: &Path, m: &Material, metric: Metric) -> Vec<(Half, Vec<TbValue>)> {
    let t = EndgameTables::open(dir, m).expect("tables open");
    let subs = open_subs(std::iter::once(dir), m).expect("sub-endgames open");
    let index = t.index();
    let mut pos = Position::startpos();
    index
        .stored_halves()
        .iter()
        .map(|&h| {
            let values = (0..index.size(h))
                .map(|i| {
                    t.values_by_one_ply(h, i, &subs[..], &mut pos)
                        .map_or(TbValue::BROKEN, |v| v[metric as usize - 1])
                })
                .collect();
            (h, values)
        })
        .collect()
}

/// Writes `halves` as `m`'s file of `metric` in `dir` (with a valid checksum; a DTZ50 file
/// holds its values, not differences).
pub fn write_metric(dir: &Path, m: &Material, metric: Metric, halves: &[(Half, Vec<TbValue>)]) {
    let refs: Vec<(Half, &[TbValue])> = halves.iter().map(|(h, v)| (*h, &v[..])).collect();
    let spec = TableSpec {
        material: *m,
        metric,
        halves: &refs,
        compression: Compression::Zstd,
        // The values were read from files whose broken entries hold their neighbours' values.
        unmark_broken: true,
        delta_of: None,
        depths: false,
    };
    write_table(dir, &spec).expect("write");
}

/// Rewrites `m`'s three files in `dir` as older ones hold them: values (not depths alone, so
/// that they are read without the WDL file), DTZ and DTZ50 for both sides to move.
pub fn store_both_sides(dir: &Path, m: &Material) {
    let values = Metric::ALL.map(|metric| read_metric(dir, m, metric));
    for (metric, v) in Metric::ALL.iter().zip(&values) {
        write_metric(dir, m, *metric, v);
    }
}
