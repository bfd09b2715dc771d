//! Every index range of the 145 endgames of 3-5 men equals the paper's Tables 9-13
//! (`tests/data/nalimov_index_sizes.csv`), both halves.

use fortress::egtb::{EndgameIndex, Half, Material};

fn rows(csv: &str) -> Vec<(String, u64, u64)> {
    csv.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.trim().split(',').collect();
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn index_sizes_match_the_paper() {
    let rows = rows(include_str!("data/nalimov_index_sizes.csv"));
    assert_eq!(rows.len(), 145);
    let mut wrong = Vec::new();
    for (name, wtm, btm) in &rows {
        let m = Material::parse(name).unwrap();
        assert!(m.is_canonical(), "{name} is not in canonical colouring");
        let idx = EndgameIndex::new(&m);
        let got = (idx.size(Half::Wtm), idx.size(Half::Btm));
        if got != (*wtm, *btm) {
            wrong.push(format!("{name}: got {got:?}, paper ({wtm}, {btm})"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_csv_lists_every_endgame_of_three_to_five_men() {
    let mut names: Vec<String> = rows(include_str!("data/nalimov_index_sizes.csv"))
        .into_iter()
        .map(|r| r.0)
        .collect();
    names.sort();
    let mut ours: Vec<String> = Material::all_up_to(5)
        .iter()
        .filter(|m| m.men() >= 3)
        .map(|m| m.to_string())
        .collect();
    ours.sort();
    assert_eq!(names, ours);
}
