//! A view over counts gathered across indexes ([`crate::gathered`]): made with a table, it
//! answers from it, notes what the table lacks, and answers other indexes' questions from its
//! own records.

use std::sync::Arc;

use braid_core::{AllowedSet, Result};
use tantivy::schema::Field;
use tantivy::Term;

use super::View;
use crate::gathered::{Answer, FeedbackCandidate, Gathered, Gathering, Question};
use crate::phonetic::PinyinKeys;
use crate::snapshot::Snapshot;

impl Snapshot {
    /// A request's view of this snapshot, confined to `allowed`, that answers every count from
    /// `given` (gathered across indexes) where it can, and notes what it could not
    /// ([`View::asked`]); meanwhile it answers those from its own allowed records.
    ///
    /// # Errors
    /// As [`Snapshot::view`].
    pub fn view_gathered<'a>(&'a self, allowed: &'a AllowedSet, given: Arc<Gathered>) -> Result<View<'a>> {
        let mut view = self.view(allowed)?;
        view.gathering = Some(Gathering::new(given));
        Ok(view)
    }
}

impl View<'_> {
    /// The questions this view was asked and its table could not answer, each once (none for a
    /// view without a table). A run that asked nothing took every decision from the table.
    pub fn asked(&self) -> Vec<Question> {
        self.gathering.as_ref().map(Gathering::asked).unwrap_or_default()
    }

    /// This index's part of the feedback model, when the lexical leg ran with feedback on a
    /// table without one ([`Gathered::feedback`]): its first search's best records.
    pub fn feedback_part(&self) -> Option<Vec<FeedbackCandidate>> {
        self.gathering.as_ref().and_then(|g| g.feedback.lock().unwrap_or_else(|p| p.into_inner()).take())
    }

    /// This index's answers to `questions`, over the records this view's caller may see (for
    /// [`Gathered::add`]): every count is a visible count and every word one an allowed record
    /// holds, so an answer says nothing of a hidden record (the longest pinyin key aside, a
    /// length the index's own search reads too).
    ///
    /// # Errors
    /// [`braid_core::Error::Lexical`] when the index cannot be read.
    pub fn answer(&self, questions: &[Question]) -> Result<Vec<Answer>> {
        let fields = &self.snapshot.fields;
        let answers = questions
            .iter()
            .map(|question| match question {
                Question::TermDf { field, term } => {
                    let field = Field::from_field_id(*field);
                    if field == fields.words {
                        Answer::Count(self.local_word_df(term))
                    } else {
                        Answer::Count(self.counted(&Term::from_field_text(field, term)))
                    }
                }
                Question::NumDocs => Answer::Count(self.docs.len()),
                Question::TotalLength { field } => {
                    let field = Field::from_field_id(*field);
                    Answer::Count(self.docs.total_length(self.scope.readers(), field).unwrap_or_else(|e| {
                        self.remember(e);
                        0
                    }))
                }
                Question::Neighbours { word, edits } => {
                    let mut found: Vec<(String, usize, u64)> = self
                        .local_neighbours(word, *edits)
                        .into_iter()
                        .filter_map(|(w, distance, _)| self.visible(w).map(|(w, df)| (w, distance, df)))
                        .collect();
                    found.sort_unstable();
                    Answer::Neighbours(found)
                }
                Question::Completions { prefix } => {
                    Answer::Words(self.visible_words(self.vocabulary.completions(prefix, usize::MAX)))
                }
                Question::Joint { tied, context } => {
                    let tied: Vec<&str> = tied.iter().map(String::as_str).collect();
                    let context: Vec<&str> = context.iter().map(String::as_str).collect();
                    Answer::Counts(self.local_joint(&tied, &context))
                }
                Question::Phonetic { key, initials: false } => {
                    Answer::Words(self.visible_words(self.snapshot.phonetic.full(key)))
                }
                Question::Phonetic { key, initials: true } => {
                    Answer::Words(self.visible_words(self.snapshot.phonetic.initials(key)))
                }
                Question::PhoneticLongest => Answer::Longest(self.snapshot.phonetic.longest() as u64),
            })
            .collect();
        self.check()?;
        Ok(answers)
    }

    /// `word` with the allowed records holding it, when any does: a candidate word sent to a
    /// gatherer is one the caller may see, with its visible count (which, summed over the
    /// indexes, is the tightest bound of the visible count the gatherer could get).
    fn visible(&self, word: String) -> Option<(String, u64)> {
        let df = self.local_word_df(&word);
        (df > 0).then_some((word, df))
    }

    /// [`View::visible`] of each of `words`, alphabetical (their order by counts over every
    /// record would say something of the hidden ones).
    fn visible_words(&self, words: Vec<(String, u64)>) -> Vec<(String, u64)> {
        let mut visible: Vec<(String, u64)> = words.into_iter().filter_map(|(w, _)| self.visible(w)).collect();
        visible.sort_unstable();
        visible
    }

    /// The vocabulary's words within `edits` of `word`, with distance and a count that bounds
    /// the visible one: gathered across indexes where the view has a table.
    pub(super) fn neighbours_of(&self, word: &str, edits: usize) -> Vec<(String, usize, u64)> {
        let local = || self.local_neighbours(word, edits);
        let Some(gathering) = &self.gathering else { return local() };
        let given = |answer: &Answer| match answer {
            Answer::Neighbours(found) => Some(found.clone()),
            _ => None,
        };
        let mut found = gathering.answer(Question::Neighbours { word: word.into(), edits }, given, local);
        // Closest first, then most frequent, as the vocabulary orders them.
        found.sort_by(|a, b| a.1.cmp(&b.1).then(b.2.cmp(&a.2)).then_with(|| a.0.cmp(&b.0)));
        found
    }

    fn local_neighbours(&self, word: &str, edits: usize) -> Vec<(String, usize, u64)> {
        self.vocabulary.neighbours(word, edits, &self.walks).into_iter().map(|n| (n.word, n.distance, n.df)).collect()
    }

    /// The vocabulary's completions of `prefix` with a count that bounds the visible one, most
    /// frequent first (then alphabetical), gathered across indexes.
    pub(super) fn completions_of(&self, prefix: &str) -> Vec<(String, u64)> {
        let local = || self.vocabulary.completions(prefix, usize::MAX);
        let Some(gathering) = &self.gathering else { return local() };
        let given = |answer: &Answer| match answer {
            Answer::Words(found) => Some(found.clone()),
            _ => None,
        };
        let mut found = gathering.answer(Question::Completions { prefix: prefix.into() }, given, local);
        found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        found
    }

    /// The pinyin table the legs read: the snapshot's own, or the one gathered across indexes.
    pub(super) fn phonetic(&self) -> ViewPhonetic<'_, '_> {
        ViewPhonetic { view: self }
    }

    fn phonetic_words(&self, key: &str, initials: bool) -> Vec<(String, u64)> {
        let table = &self.snapshot.phonetic;
        let local = || if initials { table.initials(key) } else { table.full(key) };
        let Some(gathering) = &self.gathering else { return local() };
        let given = |answer: &Answer| match answer {
            Answer::Words(found) => Some(found.clone()),
            _ => None,
        };
        gathering.answer(Question::Phonetic { key: key.into(), initials }, given, local)
    }
}

/// A view's pinyin table ([`View::phonetic`]).
pub(super) struct ViewPhonetic<'v, 'a> {
    view: &'v View<'a>,
}

impl PinyinKeys for ViewPhonetic<'_, '_> {
    fn full(&self, key: &str) -> Vec<(String, u64)> {
        self.view.phonetic_words(key, false)
    }

    fn initials(&self, key: &str) -> Vec<(String, u64)> {
        self.view.phonetic_words(key, true)
    }

    fn longest(&self) -> usize {
        let local = self.view.snapshot.phonetic.longest();
        match &self.view.gathering {
            Some(gathering) => gathering.count(Question::PhoneticLongest, || local as u64) as usize,
            None => local,
        }
    }
}
