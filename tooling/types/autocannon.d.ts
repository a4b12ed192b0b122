// Minimal typings for the parts of autocannon 8 the benchmark uses (the package ships none).
declare module "autocannon" {
  interface RawRequest {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string | Buffer
  }
  interface RequestSpec extends RawRequest {
    readonly setupRequest?: (request: RawRequest, context: object) => RawRequest
  }
  interface Options {
    readonly url: string
    readonly method?: string
    readonly headers?: Record<string, string>
    readonly body?: string
    readonly connections?: number
    readonly pipelining?: number
    readonly duration?: number
    readonly workers?: number
    readonly requests?: ReadonlyArray<RequestSpec>
  }
  interface Histogram {
    readonly average: number
    readonly mean: number
    readonly p50: number
    readonly p90: number
    readonly p99: number
    readonly max: number
    readonly total: number
  }
  interface Result {
    readonly requests: Histogram
    readonly latency: Histogram
    readonly errors: number
    readonly timeouts: number
    readonly non2xx: number
    /** Answers per HTTP status code, e.g. `{ "401": { count: 3 } }`. */
    readonly statusCodeStats: Readonly<Record<string, { readonly count: number }>>
    readonly "2xx": number
    readonly duration: number
  }
  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
