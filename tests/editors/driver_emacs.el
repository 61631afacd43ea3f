;;; driver_emacs.el --- drives the Emacs (eglot) config of docs/editors.md  -*- lexical-binding: t -*-
;; Run by test_emacs.py as
;;   emacs --batch -q -l <extracted config> -l driver_emacs.el
;; in a workspace holding a.txt; writes what it saw as JSON to $CODER_TEST_RESULT.
(require 'json)
(require 'subr-x)

(defvar coder-test--result nil)

(defun coder-test--put (key value)
  (push (cons key value) coder-test--result))

(defun coder-test--wait (pred secs what)
  (let ((end (+ (float-time) secs)))
    (while (and (not (funcall pred)) (< (float-time) end))
      (accept-process-output nil 0.05))
    (unless (funcall pred)
      (error "timeout (%ss) waiting for %s" secs what))))

(defun coder-test--transcript ()
  (with-current-buffer (get-buffer-create "*coder*")
    (buffer-substring-no-properties (point-min) (point-max))))

(defun coder-test--count (needle)
  (let ((text (coder-test--transcript)) (n 0) (start 0))
    (while (string-match (regexp-quote needle) text start)
      (setq n (1+ n) start (match-end 0)))
    n))

(defun coder-test--disk (file)
  (with-temp-buffer
    (insert-file-contents file)
    (buffer-string)))

(defun coder-test--run ()
  (let* ((ws default-directory)
         (file (expand-file-name "a.txt" ws)))
    (find-file file)
    (apply #'eglot (eglot--guess-contact))
    (coder-test--wait (lambda () (eglot-current-server)) 30 "the server")
    ;; 1. a shell command: its output once
    (coder-input "!printf 'x%sy\\n' 42")
    (coder-test--wait (lambda () (>= (coder-test--count "x42y") 1)) 30 "the shell output")
    (sleep-for 1)
    (coder-test--put 'shell_count (coder-test--count "x42y"))
    ;; 2. /help: the reply once
    (coder-input "/help")
    (coder-test--wait (lambda () (>= (coder-test--count "/undo") 1)) 30 "the /help reply")
    (sleep-for 1)
    (coder-test--put 'help_undo_count (coder-test--count "/undo"))
    ;; 3. an agent edit of the open buffer: applied without a prompt, saved
    (coder-input "fix a.txt")
    (coder-test--wait (lambda () (>= (coder-test--count "all done") 1)) 60 "the agent turn")
    (sleep-for 1)
    (coder-test--put 'after_edit_disk (coder-test--disk file))
    (coder-test--put 'after_edit_buffer (with-current-buffer (get-file-buffer file) (buffer-string)))
    (coder-test--put 'after_edit_modified (with-current-buffer (get-file-buffer file) (buffer-modified-p)))
    (coder-test--put 'done_count (coder-test--count "all done"))
    ;; 4. /undo finds the edit (the file was saved before the turn ended)
    (coder-input "/undo")
    (coder-test--wait (lambda () (or (>= (coder-test--count "Undid") 1) (>= (coder-test--count "Nothing to undo") 1)))
                      30 "the /undo reply")
    (coder-test--put 'undo_nothing (>= (coder-test--count "Nothing to undo") 1))
    (coder-test--put 'after_undo_disk (coder-test--disk file))
    (coder-test--put 'ok t)))

(condition-case err
    (coder-test--run)
  (error (coder-test--put 'error (format "%S" err))))
(coder-test--put 'transcript (coder-test--transcript))
(with-temp-file (getenv "CODER_TEST_RESULT")
  (insert (json-encode coder-test--result)))
(ignore-errors (eglot-shutdown (eglot-current-server)))
(kill-emacs 0)
