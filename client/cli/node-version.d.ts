// Types of node-version.js (plain JavaScript, so that an old Node can run it).
export declare const MINIMUM_NODE_MAJOR: number;
export declare function nodeVersionProblem(version: string): string | undefined;
