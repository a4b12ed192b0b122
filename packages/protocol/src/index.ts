export const version = "3.0"
