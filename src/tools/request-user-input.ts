/**
 * The `request_user_input` tool: the agent asks the user a question through the attached
 * clients (`input/request`) and gets the answer as the tool result.
 */
import { z } from 'zod';
import { loadToolDescription } from './descriptions.js';
import { defineTool, type Tool } from './tool.js';

/** Arguments of `request_user_input`. */
export const requestUserInputParameters = z
  .object({
    question: z.string().min(1).describe('The question, as the user will read it.'),
    choices: z.array(z.string().min(1)).min(1).max(20).optional().describe('Answers to offer, at most 20.'),
    allow_free_text: z.boolean().optional().describe('Whether the user may answer something other than the choices. Default: true without choices, false with them.'),
  })
  .refine((args) => args.choices !== undefined || args.allow_free_text !== false, { message: 'without choices the user can only answer in free text; give choices or allow free text', path: ['allow_free_text'] });

/** Parsed arguments of `request_user_input`. */
export type RequestUserInputArguments = z.infer<typeof requestUserInputParameters>;

/**
 * The `request_user_input` tool. Waits until a client answers (any connection, first answer
 * wins) and returns the answer as the output; when a client says no user can answer, or the
 * call runs where nobody can be asked, the output says so (not an error: the model decides
 * on its own). Interrupting the turn cancels the question. It changes nothing and only talks
 * to the user, so it declares `sideEffects: false`: an approval policy gates it only through
 * a rule naming it exactly.
 */
export const requestUserInputTool: Tool<RequestUserInputArguments> = defineTool({
  name: 'request_user_input',
  action: 'ask the user',
  description: loadToolDescription('request_user_input'),
  parameters: requestUserInputParameters,
  sideEffects: false,
  declaredDetails: { none: 'the question and its answer reach clients as input/requested and input/resolved, which name the item' },
  async execute(args, context) {
    const question = { question: args.question, ...(args.choices ? { choices: args.choices } : {}), allowFreeText: args.allow_free_text ?? args.choices === undefined };
    if (!context.askUser) return { output: 'no user can answer here: decide yourself and say what you assumed', isError: false, structured: { answered: false } };
    const answer = await context.askUser(question);
    if (!answer.answered) return { output: `no user can answer (${answer.reason}): decide yourself and say what you assumed`, isError: false, structured: { answered: false } };
    return { output: answer.answer, isError: false, structured: { answered: true, answer: answer.answer } };
  },
});
