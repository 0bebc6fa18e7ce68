/**
 * How a view tells the outcome of a request: a failure's message as an alert, a success as a
 * status line. Server errors are shown as given, since they name the method and the field.
 */

/** The text of a failed request (an `Error`'s message, anything else as a string). */
export function failureMessage(failure: unknown): string {
  return failure instanceof Error ? failure.message : String(failure);
}

/** A failure shown as an alert (`role="alert"`), or nothing when `error` is undefined. */
export function ErrorText({ error }: { error: string | undefined }) {
  return error ? (
    <p role="alert" class="error-text">
      {error}
    </p>
  ) : null;
}

/** A success shown as a status line (`role="status"`), or nothing when `message` is undefined. */
export function SavedText({ message }: { message: string | undefined }) {
  return message ? (
    <p role="status" class="saved">
      {message}
    </p>
  ) : null;
}
