//! The command line's tests: argument parsing and the report's order of benchmarks.

use super::*;
use crate::model::config::RunSpec;
use crate::run::session::Session;
use crate::run::spec::BodyFuture;

fn body(_: &mut Session) -> BodyFuture<'_> {
    Box::pin(async { Ok(()) })
}

const fn spec(name: &'static str, module_path: &'static str) -> BenchmarkSpec {
    BenchmarkSpec {
        name,
        module_path,
        manifest_dir: env!("CARGO_MANIFEST_DIR"),
        source_file: file!(),
        title: "",
        run: RunSpec::DEFAULT,
        cells: &[],
        body,
    }
}

static VLF: BenchmarkSpec = spec("doubling", "suite::vlf::doubling");
static POPULATION: BenchmarkSpec = spec("population", "suite::population::population");
static DATA_FILES: BenchmarkSpec = spec("equal_shares", "suite::data_files::equal_shares");

#[test]
fn the_report_lists_benchmarks_in_the_order_main_receives_them() {
    let dir = tempfile::tempdir().unwrap();
    // Published in name order, as `cargo test` or an earlier run would have left them.
    for bench in [&DATA_FILES, &POPULATION, &VLF] {
        let mut result = crate::model::sample::vlf();
        result.benchmark = bench.test_path();
        crate::output::publish(&result, &bench.file_stem(), dir.path()).unwrap();
    }
    let toc = || {
        let html = std::fs::read_to_string(dir.path().join("report/index.html")).unwrap();
        let at = |name: &str| html.find(&format!(">{name}</a>")).expect(name);
        let mut names = [
            "vlf::doubling",
            "population::population",
            "data_files::equal_shares",
        ];
        names.sort_by_key(|n| at(n));
        names
    };
    assert_eq!(
        toc(),
        [
            "data_files::equal_shares",
            "population::population",
            "vlf::doubling"
        ],
        "before a suite declared its order, the file names' order"
    );
    let report = |benchmarks: &[&'static BenchmarkSpec]| {
        let dir = dir.path().to_str().unwrap();
        let args = Args::try_parse_from(["dbbench", "--dir", dir, "report"]).unwrap();
        assert!(execute(benchmarks, &[], args).unwrap());
    };
    report(&[&VLF, &POPULATION, &DATA_FILES]);
    assert_eq!(
        toc(),
        [
            "vlf::doubling",
            "population::population",
            "data_files::equal_shares"
        ]
    );
    // A later publish (a `cargo test` of one benchmark) and the `dbbench` binary, which knows
    // no suite, keep it.
    let mut result = crate::model::sample::vlf();
    result.benchmark = POPULATION.test_path();
    crate::output::publish(&result, &POPULATION.file_stem(), dir.path()).unwrap();
    report(&[]);
    assert_eq!(
        toc(),
        [
            "vlf::doubling",
            "population::population",
            "data_files::equal_shares"
        ]
    );
}

#[test]
fn run_takes_resume() {
    let args = Args::try_parse_from(["dbbench", "run", "--resume", "vlf"]).unwrap();
    match args.command {
        Some(Command::Run {
            resume, filters, ..
        }) => {
            assert!(resume);
            assert_eq!(filters, ["vlf"]);
        }
        other => panic!("{other:?}"),
    }
    let args = Args::try_parse_from(["dbbench", "run"]).unwrap();
    assert!(matches!(
        args.command,
        Some(Command::Run { resume: false, .. })
    ));
}

#[cfg(feature = "embedded")]
static ONE_CELL: [crate::run::spec::CellSpec; 1] = [crate::run::spec::CellSpec {
    name: "only",
    storage: crate::model::config::StorageSpec::DEFAULT,
    backends: &[],
}];

// It runs a benchmark on the embedded engine: not in a build without it (CI's feature builds).
#[cfg(feature = "embedded")]
#[test]
fn a_differing_snapshot_fails_the_main_job() {
    let dir = tempfile::tempdir().unwrap();
    // The snapshots live beside the declaring crate: here, a crate of the temporary directory.
    let manifest: &'static str =
        Box::leak(dir.path().to_str().unwrap().to_string().into_boxed_str());
    let bench: &'static BenchmarkSpec = Box::leak(Box::new(BenchmarkSpec {
        manifest_dir: manifest,
        cells: &ONE_CELL,
        run: RunSpec {
            repeat: 1,
            warmup: 0,
            fixture: crate::model::config::FixtureKind::None,
            ..RunSpec::DEFAULT
        },
        ..spec("differs", "suite::differs")
    }));
    let snap = dir.path().join("snapshots").join(format!(
        "{}.snap",
        snapshot::snapshot_name(&bench.file_stem(), "smoke", "embedded")
    ));
    std::fs::create_dir_all(snap.parent().unwrap()).unwrap();
    std::fs::write(
        &snap,
        "---\nsource: dbbench-core/src/output/snapshot.rs\n---\nbenchmark: something else\n",
    )
    .unwrap();
    let main_job = || {
        run(
            &[bench],
            &[],
            &[],
            Some("smoke"),
            dir.path().join("work"),
            None,
            false,
        )
        .unwrap()
    };
    assert!(
        !main_job(),
        "every cell ran, but the snapshot differs: exit status 1"
    );
    // The pending snapshot insta wrote (not in CI, where insta writes none) accepted: it matches.
    let pending = snap.with_extension("snap.new");
    if pending.exists() {
        std::fs::rename(&pending, &snap).unwrap();
        assert!(main_job(), "the accepted snapshot matches: exit status 0");
    }
}

#[test]
fn preflight_is_the_named_backends_or_the_only_one_that_has_one() {
    use crate::engine::registry::REGISTERED;
    let with = REGISTERED.iter().filter(|r| r.preflight.is_some()).count();
    match preflight_of(None) {
        Ok(_) => assert_eq!(with, 1),
        Err(e) => {
            assert_eq!(with, 0, "{e}");
            assert!(
                e.to_string().contains("no backend of this build has one"),
                "{e}"
            );
        }
    }
    let unknown = preflight_of(Some("oracle")).err().unwrap().to_string();
    assert!(unknown.contains("names no backend: `oracle`"), "{unknown}");
    // A backend built without a preflight says so; one not built names its feature.
    for r in REGISTERED.iter().filter(|r| r.preflight.is_none()) {
        let why = preflight_of(Some(r.profile.kind.keyword()))
            .err()
            .unwrap()
            .to_string();
        assert!(why.contains("has none"), "{why}");
    }
    for kind in crate::model::config::BackendKind::ALL {
        if !crate::engine::registry::is_built(kind) {
            let why = preflight_of(Some(kind.keyword()))
                .err()
                .unwrap()
                .to_string();
            assert!(why.contains("was built without"), "{why}");
        }
    }
}
