//! `ToolCatalogue`: tool definitions searched as documents (the bundled catalogue,
//! `datasets/tools/tools.json`, without a model: the lexical and fuzzy legs).

use braid::{Error, ToolCatalogue};

fn catalogue() -> ToolCatalogue {
    let text = std::fs::read_to_string(crate::common::repo().join("datasets/tools/tools.json")).unwrap();
    ToolCatalogue::from_json(&text, None).unwrap()
}

fn names(catalogue: &ToolCatalogue, query: &str) -> Vec<String> {
    catalogue
        .search(query, 3)
        .unwrap()
        .into_iter()
        .map(|h| h.definition["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn tools_are_found_by_task_name_parameter_and_typo() {
    let catalogue = catalogue();
    assert_eq!(catalogue.len(), 28);
    assert_eq!(names(&catalogue, "refund a payment")[0], "refund_payment");
    assert_eq!(names(&catalogue, "kubernets relay deploy")[0], "deploy_relay_kubernetes");
    assert_eq!(names(&catalogue, "rotate the api key")[0], "rotate_api_key");
    // The definition comes back whole, input schema and all.
    let hit = &catalogue.search("refund a payment", 1).unwrap()[0];
    assert!(hit.definition["input_schema"]["properties"]["payment_id"].is_object());
    assert!(hit.score > 0.0);
}

#[test]
fn a_bad_catalogue_is_a_typed_error() {
    for (json, says) in [
        ("{\"name\": \"x\"}", "array"),
        ("[{\"description\": \"no name\"}]", "without a name"),
        ("[{\"name\": \"a\"}, {\"name\": \"a\"}]", "two tools"),
    ] {
        match ToolCatalogue::from_json(json, None) {
            Err(Error::InvalidRequest { reason }) => assert!(reason.contains(says), "{reason}"),
            other => panic!("{json}: {other:?}"),
        }
    }
}
