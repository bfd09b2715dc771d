//! A fuzz of damaged Syzygy files: 1,000 variants of `KQvKR.rtbw` (bytes changed anywhere,
//! header and checksum included; the file cut at any length; bytes appended), each given to
//! `Syzygy::open` beside its sound sub-tables, and every variant taken probed in 2,000 random
//! positions of queen against rook. A crash ends the run, so finishing is the result: it counts
//! the variants refused, with their causes, and checks that a variant taken probes as the
//! sound file does (only a variant whose bytes came out unchanged may be taken).
//!
//! Run: `cargo bench --bench syzygy_damage` (env `VARIANTS`, default 1000).

use fortress::chess::Position;
use fortress::egtb::play::syzygy::Syzygy;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// Random legal positions of queen against rook (either side to move).
fn positions(n: usize, rng: &mut fastrand::Rng) -> Vec<Position> {
    let mut out = Vec::new();
    while out.len() < n {
        let mut board = [' '; 64];
        for man in ['K', 'Q', 'k', 'r'] {
            let mut sq = rng.usize(..64);
            while board[sq] != ' ' {
                sq = rng.usize(..64);
            }
            board[sq] = man;
        }
        let ranks: Vec<String> = (0..8)
            .rev()
            .map(|r| {
                let mut s = String::new();
                let mut empty = 0;
                for f in 0..8 {
                    match board[r * 8 + f] {
                        ' ' => empty += 1,
                        c => {
                            if empty > 0 {
                                s.push_str(&empty.to_string());
                                empty = 0;
                            }
                            s.push(c);
                        }
                    }
                }
                if empty > 0 {
                    s.push_str(&empty.to_string());
                }
                s
            })
            .collect();
        let side = if rng.bool() { 'w' } else { 'b' };
        if let Ok(p) = Position::from_fen(&format!("{} {side} - - 0 1", ranks.join("/"))) {
            out.push(p);
        }
    }
    out
}

fn main() {
    let variants: usize = std::env::var("VARIANTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/syzygy");
    let sound = std::fs::read(shipped.join("KQvKR.rtbw")).expect("the shipped file");
    let dir = tempfile::tempdir().expect("a temporary directory");
    for name in ["KQvK.rtbw", "KRvK.rtbw"] {
        std::fs::copy(shipped.join(name), dir.path().join(name)).expect("copy");
    }
    let target = dir.path().join("KQvKR.rtbw");
    let mut rng = fastrand::Rng::with_seed(1000);
    let probes = positions(2000, &mut rng);

    std::fs::write(&target, &sound).expect("write");
    let reference: Vec<_> = {
        let t = Syzygy::open(&[dir.path().to_path_buf()]).expect("the sound files");
        probes.iter().map(|p| t.wdl(p)).collect()
    };

    let mut causes: BTreeMap<String, usize> = BTreeMap::new();
    let (mut taken, mut unchanged) = (0, 0);
    let start = Instant::now();
    for v in 0..variants {
        let mut bytes = sound.clone();
        match v % 4 {
            0 | 1 => {
                for _ in 0..rng.usize(1..=200) {
                    let i = rng.usize(..bytes.len());
                    bytes[i] ^= rng.u8(1..);
                }
            }
            2 => bytes.truncate(rng.usize(..bytes.len())),
            _ => bytes.extend((0..rng.usize(1..=128)).map(|_| rng.u8(..))),
        }
        std::fs::write(&target, &bytes).expect("write");
        match Syzygy::open(&[dir.path().to_path_buf()]) {
            Ok(t) => {
                let refused = t.left_out().iter().find(|l| l.contains("KQvKR.rtbw"));
                match refused {
                    Some(line) => {
                        // The cause without the size, which differs from variant to variant.
                        let cause = line.split("left out: ").nth(1).unwrap_or(line);
                        let cause = cause.trim_start_matches(|c: char| c.is_ascii_digit());
                        let cause = cause.trim_start_matches(" bytes, ").to_string();
                        *causes.entry(cause).or_default() += 1;
                    }
                    None => {
                        taken += 1;
                        unchanged += usize::from(bytes == sound);
                        let got: Vec<_> = probes.iter().map(|p| t.wdl(p)).collect();
                        assert_eq!(got, reference, "variant {v} taken and probed differently");
                    }
                }
            }
            Err(e) => *causes.entry(format!("refused: {e}")).or_default() += 1,
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!("{variants} damaged variants of KQvKR.rtbw in {secs:.1} s, 0 crashes");
    for (cause, n) in &causes {
        println!("  left out, {cause}: {n}");
    }
    println!("  taken: {taken} ({unchanged} of them byte for byte the sound file)");
    assert_eq!(taken, unchanged, "a damaged file was taken");
}
