//! Table files with made-up values, for the tests of what reads them (`tests/table_file.rs`,
//! `tests/tables_uci.rs`): an entry the index calls broken is written broken, every other one
//! gets the value the caller's function gives it.

use fortress::egtb::format::{write_table, Compression, Metric, TableSpec, TbValue};
use fortress::egtb::{EndgameIndex, Half, Material};
use std::path::{Path, PathBuf};

/// Writes the `metric` file of endgame `name` (canonical colouring) into `dir` with
/// `value(half, index)` at each legal entry, its blocks stored with `compression`; returns
/// its path and the values of each stored half, in `EndgameIndex::stored_halves` order.
pub fn write(
    dir: &Path,
    name: &str,
    metric: Metric,
    compression: Compression,
    value: impl Fn(Half, u64) -> TbValue,
) -> (PathBuf, Vec<Vec<TbValue>>) {
    let m = Material::parse(name).unwrap();
    let idx = EndgameIndex::new(&m);
    let vals: Vec<Vec<TbValue>> = idx
        .stored_halves()
        .iter()
        .map(|&h| {
            (0..idx.size(h))
                .map(|i| idx.decode(h, i).map_or(TbValue::BROKEN, |_| value(h, i)))
                .collect()
        })
        .collect();
    let halves: Vec<(Half, &[TbValue])> = idx
        .stored_halves()
        .iter()
        .zip(&vals)
        .map(|(&h, v)| (h, v.as_slice()))
        .collect();
    let spec = TableSpec {
        material: m,
        metric,
        halves: &halves,
        compression,
        unmark_broken: false,
        delta_of: None,
        depths: false,
    };
    (write_table(dir, &spec).unwrap(), vals)
}
