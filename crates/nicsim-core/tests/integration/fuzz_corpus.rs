//! Replays every checked-in fuzz input (`fuzz/corpus/<target>/`, seeds and
//! past crashes) through the fuzz target bodies in `nicsim_testkit::fuzz`, so
//! stable `cargo test` catches a regression that only libFuzzer found.

use std::path::PathBuf;

use nicsim_testkit::fuzz;

fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("readable entry").path())
        .collect();
    files.sort();
    files
}

#[test]
fn every_corpus_input_holds_its_property() {
    for target in fuzz::TARGETS {
        let files = corpus(target);
        assert!(files.len() >= 10, "the {target} corpus has {} files; it should seed the fuzzer", files.len());
        for file in files {
            let data = std::fs::read(&file).unwrap();
            let outcome = std::panic::catch_unwind(|| fuzz::run(target, &data));
            assert!(outcome.is_ok(), "{target}: {} fails its property", file.display());
        }
    }
}

#[test]
fn the_loader_corpus_holds_every_repository_scenario_and_each_is_valid() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let name = format!("repo-{}", path.file_name().unwrap().to_string_lossy());
            let seeded = corpus("scenario").into_iter().find(|p| p.file_name().unwrap().to_string_lossy() == name);
            let seeded = seeded.unwrap_or_else(|| panic!("{name} is not in fuzz/corpus/scenario (run fuzz/seeds.py)"));
            assert_eq!(std::fs::read(&seeded).unwrap(), std::fs::read(&path).unwrap(), "{name} is stale");
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(nicsim_core::resolve_toml(&text, "").is_ok(), "{} is rejected", path.display());
        }
    }
}
