//! Compile-time behaviour of `#[db_bench]`: every rejected attribute with the exact messages
//! (the `.stderr` files beside the cases), and expansions that must compile and run. And of the
//! backend traits: a database's methods refuse another backend's connection type (`pairing`).
//!
//! After an intended change of a message, regenerate the `.stderr` files with
//! `TRYBUILD=overwrite cargo test -j2 -p dbbench-tests --test ui` and review the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    for topic in [
        "unknown_option",
        "duplicate",
        "types",
        "sizes",
        "ranges",
        "lists",
        "cases",
        "contradictions",
        "signature",
        "run_options",
        "scale",
        "several",
        "precision",
        "not_on",
        "like",
        "per_backend",
        "shape",
        "pairing",
    ] {
        t.compile_fail(format!("tests/ui/{topic}/*.rs"));
    }
    t.pass("tests/ui/pass/*.rs");
}
