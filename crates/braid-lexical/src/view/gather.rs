//! A view over counts gathered across indexes ([`crate::gathered`]): made with a table, it
//! answers from it, notes what the table lacks, and answers other indexes' questions from its
//! own records.

use std::sync::Arc;

use braid_core::{AllowedSet, Result};
use tantivy::schema::Field;
use tantivy::Term;

use super::View;
use crate::gathered::{Answer, FeedbackCandidate, Gathered, Gathering, Memo, Question};
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
        self.view_remembering(allowed, given, Arc::new(Memo::default()))
    }

    /// [`Snapshot::view_gathered`], for one round of a fan-out among several of one request:
    /// the views of its rounds share `memo`, so a round does not redo what new counts do not
    /// change. One memo serves one request, on this snapshot and `allowed` only.
    ///
    /// # Errors
    /// As [`Snapshot::view`].
    pub fn view_remembering<'a>(
        &'a self,
        allowed: &'a AllowedSet,
        given: Arc<Gathered>,
        memo: Arc<Memo>,
    ) -> Result<View<'a>> {
        let mut view = self.view(allowed)?;
        view.gathering = Some(Gathering::new(given, memo));
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
                Question::Completions { .. } | Question::Phonetic { .. } => {
                    Answer::Words(self.visible_words(self.local_words(question.clone())))
                }
                Question::Joint { tied, context } => {
                    let tied: Vec<&str> = tied.iter().map(String::as_str).collect();
                    let context: Vec<&str> = context.iter().map(String::as_str).collect();
                    Answer::Counts(self.local_joint(&tied, &context))
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
        let question = Question::Neighbours { word: word.into(), edits };
        if let Some(found) = self.gathered_list(gathering, &question) {
            return found;
        }
        let mut found = gathering.answer(question, |_| None, local);
        found.sort_by(closest);
        found
    }

    /// This snapshot's vocabulary words within `edits` of `word`, walked once per request
    /// when the view remembers across rounds.
    fn local_neighbours(&self, word: &str, edits: usize) -> Vec<(String, usize, u64)> {
        let walk = || {
            let found = self.vocabulary.neighbours(word, edits, &self.walks);
            found.into_iter().map(|n| (n.word, n.distance, n.df))
        };
        match &self.gathering {
            Some(gathering) => {
                Memo::get_or(&gathering.memo.walks, (word.to_string(), edits), || walk().collect()).to_vec()
            }
            None => walk().collect(),
        }
    }

    /// The vocabulary's completions of `prefix` with a count that bounds the visible one, most
    /// frequent first (then alphabetical), gathered across indexes.
    pub(super) fn completions_of(&self, prefix: &str) -> Vec<(String, u64)> {
        let local = || self.local_words(Question::Completions { prefix: prefix.into() });
        let Some(gathering) = &self.gathering else { return local() };
        let question = Question::Completions { prefix: prefix.into() };
        if let Some(found) = self.gathered_list(gathering, &question) {
            return found.into_iter().map(|(w, _, df)| (w, df)).collect();
        }
        let mut found = gathering.answer(question, |_| None, local);
        found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        found
    }

    /// The gathered answer to a word-list `question`, ordered as the legs read it (neighbours
    /// closest first, other words most frequent first, then alphabetical; words carry
    /// distance 0): made once per request when the view remembers across rounds, since a
    /// gathered answer never changes.
    fn gathered_list(&self, gathering: &Gathering, question: &Question) -> Option<Vec<(String, usize, u64)>> {
        let answer = gathering.given.get(question)?;
        let ordered = || -> Arc<[(String, usize, u64)]> {
            match answer {
                Answer::Neighbours(found) => {
                    let mut found = found.clone();
                    found.sort_by(closest);
                    found.into()
                }
                Answer::Words(found) => {
                    let mut found: Vec<(String, usize, u64)> =
                        found.iter().map(|(w, df)| (w.clone(), 0, *df)).collect();
                    found.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
                    found.into()
                }
                _ => Arc::from(Vec::new()),
            }
        };
        let fits = matches!(
            (question, answer),
            (Question::Neighbours { .. }, Answer::Neighbours(_)) | (Question::Completions { .. }, Answer::Words(_))
        );
        if !fits {
            return None;
        }
        Some(Memo::get_or(&gathering.memo.lists, question.clone(), ordered).to_vec())
    }

    /// This index's own word list for a completions or pinyin `question`, from the index-wide
    /// tables (every word, with its count over all records): read once per request when the
    /// view remembers across rounds.
    fn local_words(&self, question: Question) -> Vec<(String, u64)> {
        let table = &self.snapshot.phonetic;
        let read = |question: &Question| match question {
            Question::Completions { prefix } => self.vocabulary.completions(prefix, usize::MAX),
            Question::Phonetic { key, initials: true } => table.initials(key),
            Question::Phonetic { key, .. } => table.full(key),
            _ => Vec::new(),
        };
        match &self.gathering {
            Some(gathering) => {
                let words = Memo::get_or(&gathering.memo.words, question.clone(), || read(&question).into());
                words.to_vec()
            }
            None => read(&question),
        }
    }

    /// The pinyin table the legs read: the snapshot's own, or the one gathered across indexes.
    pub(super) fn phonetic(&self) -> ViewPhonetic<'_, '_> {
        ViewPhonetic { view: self }
    }

    fn phonetic_words(&self, key: &str, initials: bool) -> Vec<(String, u64)> {
        let question = || Question::Phonetic { key: key.into(), initials };
        let local = || self.local_words(question());
        let Some(gathering) = &self.gathering else { return local() };
        let given = |answer: &Answer| match answer {
            Answer::Words(found) => Some(found.clone()),
            _ => None,
        };
        gathering.answer(question(), given, local)
    }
}

/// Closest first, then most frequent, then alphabetical, as the vocabulary orders neighbours.
fn closest(a: &(String, usize, u64), b: &(String, usize, u64)) -> std::cmp::Ordering {
    a.1.cmp(&b.1).then(b.2.cmp(&a.2)).then_with(|| a.0.cmp(&b.0))
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
