//! A database name that fits a server's limit on identifiers: a name short enough stays as it
//! is; a longer one becomes `dbbench_`, a hash of the whole name and as much of its tail as fits.
//!
//! Why the tail: a repetition's name ends in its cell, repetition and PID, which tell two
//! databases of one run apart. Why the hash of the whole name: two long names that differ only in
//! what the cut drops stay different. Why the prefix: every database dbbench makes starts with
//! [`OWNED_PREFIX`], which the sweeps of existing servers look for. Each server's limit differs
//! (PostgreSQL 63 bytes, MariaDB 64), so the engine passes it in.

use crate::model::plan::OWNED_PREFIX;

/// `name` if it is at most `max` bytes; otherwise `dbbench_<hash>_<tail>` of exactly `max`
/// bytes.
pub fn fit(name: &str, max: usize) -> String {
    if name.len() <= max {
        return name.to_string();
    }
    // FNV-1a: stable across runs and platforms, unlike the std hasher.
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let head = format!("{OWNED_PREFIX}{:08x}_", hash as u32);
    let tail = &name[name.len() - (max - head.len())..];
    format!("{head}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_name_stays_as_it_is() {
        assert_eq!(fit("dbbench_short", 63), "dbbench_short");
        let exact = format!("dbbench_{}", "x".repeat(55));
        assert_eq!(fit(&exact, 63), exact);
    }

    #[test]
    fn long_names_fit_keep_their_tail_and_stay_distinct() {
        for max in [63, 64] {
            let a = format!("dbbench_{}_cell_a_r0_123", "m".repeat(80));
            let b = format!("dbbench_{}_cell_b_r0_123", "m".repeat(80));
            let (na, nb) = (fit(&a, max), fit(&b, max));
            assert_eq!((na.len(), nb.len()), (max, max));
            assert!(
                na.starts_with(OWNED_PREFIX) && na.ends_with("cell_a_r0_123"),
                "{na}"
            );
            assert_ne!(na, nb);
            // Names that differ only where the cut drops them stay different.
            let c = format!("dbbench_c{}_cell_a_r0_123", "m".repeat(79));
            assert_ne!(fit(&c, max), na);
            // The same name always fits the same way.
            assert_eq!(fit(&a, max), na);
        }
    }

    #[test]
    fn the_shortened_form_is_pinned() {
        // Pinned: a change here would rename the databases dbbench makes for long names.
        let long = format!("dbbench_{}_cell_a_r0_123", "m".repeat(80));
        assert_eq!(
            fit(&long, 63),
            "dbbench_290e144f_mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm_cell_a_r0_123"
        );
    }
}
