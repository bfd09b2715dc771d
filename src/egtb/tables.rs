//! One endgame's generated tables opened together (DTM, DTZ, DTZ50 files of `egtb::file`),
//! read by position or by index. The generator reads its sub-endgames through this; the prober
//! can too. Units: DTM in winner's moves (Nalimov); DTZ and DTZ50 in plies (Bourzutschky,
//! Tamplin, Haworth 2005, Sections 2-4), see `tables/README.md`.

use super::file::{
    file_name, Metric, TableError, TableFile, TableHeader, TbValue, FLAG_EQUALS_DTZ,
};
use super::index::{EndgameIndex, Half, TbPosition};
use super::material::Material;
use std::path::Path;

/// The three files of one endgame and its index.
pub struct EndgameTables {
    material: Material,
    index: EndgameIndex,
    files: [TableFile; 3],
}

impl EndgameTables {
    /// Opens and verifies (header and checksum) the three files of `material` in `dir`.
    pub fn open(dir: &Path, material: &Material) -> Result<EndgameTables, TableError> {
        let m = material.canonical().0;
        let open = |metric| TableFile::open_for(&dir.join(file_name(&m, metric)), &m, metric);
        let files = [open(Metric::Dtm)?, open(Metric::Dtz)?, open(Metric::Dtz50)?];
        Ok(EndgameTables {
            material: m,
            index: EndgameIndex::new(&m),
            files,
        })
    }

    /// Opens the three files as `open` does, then holds them decompressed in memory.
    pub fn open_loaded(dir: &Path, material: &Material) -> Result<EndgameTables, TableError> {
        let mut t = EndgameTables::open(dir, material)?;
        for f in &mut t.files {
            f.load()?;
        }
        Ok(t)
    }

    pub fn material(&self) -> Material {
        self.material
    }

    pub fn index(&self) -> &EndgameIndex {
        &self.index
    }

    /// The header of one metric's file.
    pub fn header(&self, metric: Metric) -> &TableHeader {
        self.files[metric as usize - 1].header()
    }

    /// The value of one metric at an entry (None if out of range or the half is absent). The
    /// value of a broken entry is the broken mark only where `marks_broken`.
    #[inline]
    pub fn value(&self, metric: Metric, half: Half, idx: u64) -> Option<TbValue> {
        let file = &self.files[metric as usize - 1];
        if metric == Metric::Dtz50 && file.header().is_dtz_delta() {
            return file.value_over(&self.files[Metric::Dtz as usize - 1], half, idx);
        }
        file.value(half, idx)
    }

    /// Do broken entries read as broken in all three files? (Files of format 1 mark them;
    /// the generator now stores them as their neighbours, which compresses better.)
    pub fn marks_broken(&self) -> bool {
        self.files.iter().all(|f| f.header().marks_broken())
    }

    /// The entry of a position of this endgame (either colouring), None if not indexable.
    #[inline]
    pub fn entry(&self, pos: &TbPosition) -> Option<(Half, u64)> {
        self.index.index(pos)
    }

    /// DTM, DTZ and DTZ50 at an entry (None if out of range or the half is absent).
    #[inline]
    pub fn values(&self, half: Half, idx: u64) -> Option<[TbValue; 3]> {
        let [dtm, dtz, dtz50] = &self.files;
        let dtz = dtz.value(half, idx)?;
        // A DTZ50 code of 0 is the DTZ value just read: no second lookup.
        let dtz50 = match dtz50.value(half, idx)? {
            code if !dtz50.header().is_dtz_delta() => code,
            code if code == TbValue::BROKEN => dtz,
            code => TbValue::from_raw(code.raw() - 1),
        };
        Some([dtm.value(half, idx)?, dtz, dtz50])
    }

    /// Are the DTZ and DTZ50 files the same values (same payload, by its checksum)? Then the
    /// 50-move rule changes no result in this endgame. False does not say it does.
    pub fn rule50_changes_nothing(&self) -> bool {
        let [_, dtz, dtz50] = &self.files;
        if dtz50.header().is_dtz_delta() {
            return dtz50.header().flags & FLAG_EQUALS_DTZ != 0;
        }
        let key = |f: &TableFile| {
            let h = f.header();
            (
                h.value_width,
                h.compression,
                h.entries,
                h.payload_len,
                h.payload_hash,
            )
        };
        key(dtz) == key(dtz50)
    }

    /// DTM, DTZ and DTZ50 of a position, from the side to move's point of view.
    pub fn probe(&self, pos: &TbPosition) -> Option<[TbValue; 3]> {
        let (half, idx) = self.entry(pos)?;
        self.values(half, idx)
    }
}

/// Are all three files of `material` present in `dir` and valid (header and checksum)?
pub fn tables_present(dir: &Path, material: &Material) -> bool {
    EndgameTables::open(dir, material).is_ok()
}
