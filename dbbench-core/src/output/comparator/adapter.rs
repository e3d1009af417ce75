//! [`NoiseComparator`]: insta's `Comparator` applying a [`Tolerance`], so a passing comparison
//! leaves the `.snap` untouched and a failing one takes insta's normal path. Apart from the
//! comparison because it is only the glue to insta.

use super::{Findings, Tolerance};

/// insta's `Comparator` applying a [`Tolerance`] to text snapshots; binary snapshots compare as
/// insta's default does.
#[derive(Debug, Clone)]
pub struct NoiseComparator {
    /// The tolerance applied.
    pub tolerance: Tolerance,
    /// The findings of every comparison made, for the caller to show once (what was compared,
    /// what was not, and why).
    pub findings: std::sync::Arc<std::sync::Mutex<Findings>>,
}

impl insta::Comparator for NoiseComparator {
    fn matches(&self, reference: &insta::Snapshot, test: &insta::Snapshot) -> bool {
        match (reference.as_text(), test.as_text()) {
            (Some(old), Some(new)) => {
                let (outcome, findings) = self
                    .tolerance
                    .compare_noting(&old.to_string(), &new.to_string());
                if let Ok(mut kept) = self.findings.lock() {
                    kept.extend(findings);
                }
                match outcome {
                    Ok(()) => true,
                    Err(differences) => {
                        // Printed before insta's diff (and captured with it by the test
                        // harness), so the output says which change was judged real and why.
                        eprintln!("dbbench: the snapshot differs:");
                        for d in differences {
                            eprintln!("  {d}");
                        }
                        false
                    }
                }
            }
            _ => insta::DefaultComparator.matches(reference, test),
        }
    }

    fn dyn_clone(&self) -> Box<dyn insta::Comparator> {
        Box::new(self.clone())
    }
}
